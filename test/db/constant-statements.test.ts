import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { type Bind, bindIn, StatementShapes } from '../../src/db/constant-statements.js';
import { ClockCache } from '../../src/lru.js';
import { contactWriteReadValues, readForContactWrite } from '../../src/modules/contacts/contact-write-read.js';
import { addEmail, addPhone, addTags, insertContact, listEmails, listPhones, listTags } from '../../src/modules/contacts/contacts.repo.js';
import { makeAccount, randomEmail, randomPhone, uniq } from '../helpers/factories.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';

/**
 * The hot statements as constant texts and per-shape compiled reads (db/constant-statements.ts):
 * the same repository functions on either engine (the suite runs on the one DATABASE_URL names).
 */
describe('constant statements', () => {
  let t: TestDatabase;
  let db: Db;
  before(async () => {
    t = await openTestDatabase();
    db = t.db;
  });
  after(() => t.close());

  async function newContact(accountId: string): Promise<string> {
    const id = uniq('ld_');
    const now = Date.now();
    await insertContact(db, accountId, {
      id,
      name: 'Ada',
      archived: 0,
      opted_out: 0,
      metadata: '{}',
      created_at: now,
      updated_at: now,
      version: 0,
    });
    return id;
  }

  test('insertContact, addEmail, addPhone, addTags write what the query builder wrote', async () => {
    const { id: accountId } = await makeAccount(db);
    const contactId = await newContact(accountId);
    const [first, second] = [randomEmail(), randomEmail()];
    await addEmail(db, accountId, contactId, first);
    await addEmail(db, accountId, contactId, second);
    const phone = randomPhone();
    await addPhone(db, accountId, contactId, phone);
    // Any number of tags, repeated ones and ones the contact has included; quotes and commas are data.
    await addTags(db, accountId, contactId, ['vip', `it's, "quoted"`, 'vip']);
    await addTags(db, accountId, contactId, ['vip', 'b2b']);
    assert.deepEqual(await listEmails(db, accountId, contactId), [first, second]);
    assert.deepEqual(await listPhones(db, accountId, contactId), [phone]);
    assert.deepEqual((await listTags(db, accountId, contactId)).sort(), ['b2b', `it's, "quoted"`, 'vip'].sort());
  });

  test('the lead write read finds owners by each shape of a lead', async () => {
    const { id: accountId } = await makeAccount(db);
    const contactId = await newContact(accountId);
    const email = randomEmail();
    await addEmail(db, accountId, contactId, email);
    const other = randomEmail();
    for (let round = 0; round < 2; round++) {
      // The second round runs the shapes compiled by the first with other values.
      const byEmail = await readForContactWrite(db.kysely, contactWriteReadValues(accountId, { email }, [], []));
      assert.equal(byEmail.owners.byEmail, contactId);
      assert.equal(byEmail.contact?.id, contactId);
      const byIdAndEmail = await readForContactWrite(
        db.kysely,
        contactWriteReadValues(accountId, { id: contactId, email: other }, ['x', 'y'], ['k']),
      );
      assert.deepEqual(byIdAndEmail.owners, { byId: contactId });
      assert.equal(byIdAndEmail.contact?.id, contactId);
      const nobody = await readForContactWrite(db.kysely, contactWriteReadValues(accountId, { email: other }, [], []));
      assert.deepEqual(nobody.owners, {});
      assert.equal(nobody.contact, undefined);
    }
  });

  test('a shape refuses a call whose values it has no place for', async () => {
    const shapes = new StatementShapes();
    const build = (bind: Bind) => sql<{ v: string }>`select cast(${bind('a')} as text) as v`;
    const { rows } = await shapes.run(db.kysely, 'a', { a: 'one' }, build);
    assert.deepEqual(rows, [{ v: 'one' }]);
    await assert.rejects(shapes.run(db.kysely, 'a', { b: 'two' }, build), /no value for a/);
  });

  test('a group of values is bound by path: one definition used twice in a statement, each use with its own values', async () => {
    const shapes = new StatementShapes();
    // The same definition for two groups, as the lead write's two plans (contact-write-first.ts).
    const part = (bind: Bind) => sql`cast(${bind('name')} as text) || '/' || cast(${bind('tags', 1)} as text)`;
    const build = (bind: Bind) => sql<{ n: string; u: string }>`select ${part(bindIn(bind, 'n'))} as n, ${part(bindIn(bind, 'u'))} as u`;
    for (const [n, u] of [
      ['ada', 'bob'],
      ['cy', 'di'],
    ]) {
      // The second round runs the text the first compiled, with its own values.
      const values = { n: { name: n, tags: ['x', `${n}-tag`] }, u: { name: u, tags: ['y', `${u}-tag`] } };
      const { rows } = await shapes.run(db.kysely, 'two groups', values, build);
      assert.deepEqual(rows, [{ n: `${n}/${n}-tag`, u: `${u}/${u}-tag` }]);
    }
    await assert.rejects(shapes.run(db.kysely, 'two groups', { n: { name: 'ada', tags: ['x', 'y'] } }, build), /no value for u\.name/);
  });
});

describe('ClockCache', () => {
  test('a hit keeps its entry when the cache is full; the entry unused since it was last looked at goes', () => {
    const cache = new ClockCache<string, number>(3);
    for (const key of ['a', 'b', 'c']) cache.get(key, () => 1);
    cache.get('a', () => assert.fail('a hit makes nothing'));
    cache.get('d', () => 4);
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((k) => cache.has(k)),
      [true, false, true, true],
    );
    // Every entry used: one pass unmarks them all, then the first looked at (c, a moved behind it) goes.
    for (const key of ['a', 'c', 'd']) cache.get(key, () => 0);
    cache.get('e', () => 5);
    assert.deepEqual(
      ['a', 'c', 'd', 'e'].map((k) => cache.has(k)),
      [true, false, true, true],
    );
  });
});
