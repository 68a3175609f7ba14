import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { analyzeSoon, analyzeTables } from '../../src/db/refresh-statistics.js';
import { makeAccount, makeContact } from '../helpers/factories.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';

/** db/refresh-statistics.ts: ANALYZE after a bulk import, PostgreSQL only. */

let t: TestDatabase;
before(async () => {
  t = await openTestDatabase();
});
after(() => t.close());

/** PostgreSQL's row estimate for the table (pg_class.reltuples, which ANALYZE sets) and the true count. */
async function estimateAndCount(table: 'contacts' | 'contact_tags') {
  const { rows } = await sql<{ estimate: number; n: string }>`
    select (select reltuples from pg_class where oid = ${table}::regclass) as estimate,
           (select count(*) from ${sql.table(table)}) as n`.execute(t.db.kysely);
  return { estimate: Number(rows[0]!.estimate), count: Number(rows[0]!.n) };
}

async function someContacts(n: number) {
  const account = await makeAccount(t.db);
  for (let i = 0; i < n; i++) await makeContact(t.db, account.id, { tags: ['imported'] });
}

test('analyzeTables: PostgreSQL knows the tables as they are; SQLite is left without statistics', async () => {
  await someContacts(12);
  await analyzeTables(t.db, ['contacts', 'contact_tags']);
  if (t.db.engine === 'postgres') {
    // A small table is read whole: the estimate is the count.
    for (const table of ['contacts', 'contact_tags'] as const) {
      const { estimate, count } = await estimateAndCount(table);
      assert.equal(estimate, count, table);
    }
  } else {
    const { rows } = await sql<{ name: string }>`select name from sqlite_master where name = 'sqlite_stat1'`.execute(t.db.kysely);
    assert.deepEqual(rows, [], 'Herald never runs ANALYZE on SQLite');
  }
});

test('analyzeSoon: the calls of one import lead to one ANALYZE after the last, of every table named', async () => {
  if (t.db.engine !== 'postgres') return;
  await someContacts(7);
  const errors: unknown[] = [];
  analyzeSoon(t.db, ['contacts'], (e) => errors.push(e), 200);
  await someContacts(5);
  analyzeSoon(t.db, ['contact_tags'], (e) => errors.push(e), 200);
  // Statistics from before these writes until the delay has passed since the last call.
  const deadline = Date.now() + 5_000;
  let contacts = await estimateAndCount('contacts');
  let tags = await estimateAndCount('contact_tags');
  while ((contacts.estimate !== contacts.count || tags.estimate !== tags.count) && Date.now() < deadline) {
    await sleep(50);
    [contacts, tags] = await Promise.all([estimateAndCount('contacts'), estimateAndCount('contact_tags')]);
  }
  assert.deepEqual(errors, []);
  assert.equal(contacts.estimate, contacts.count);
  assert.equal(tags.estimate, tags.count);
});
