import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { countContacts } from '../../src/modules/contacts/contacts.admin.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeContact, uniq } from '../helpers/factories.js';

/**
 * Migration 0014: on PostgreSQL, trigram indexes serve the substring search of names and
 * emails; SQLite gets nothing (its search scans). Runs on the engine of DATABASE_URL.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('PostgreSQL has the trigram indexes of the contact search; SQLite has none', async () => {
  if (t.db.engine === 'sqlite') {
    const { rows } = await sql<{ name: string }>`select name from sqlite_master where name like '%trgm%'`.execute(t.db.kysely);
    assert.deepEqual(rows, []);
    return;
  }
  const { rows } = await sql<{ indexname: string; indexdef: string }>`
    select indexname, indexdef from pg_indexes where indexname in ('contacts_name_trgm', 'contact_emails_email_trgm') order by indexname`.execute(
    t.db.kysely,
  );
  assert.deepEqual(
    rows.map((r) => r.indexname),
    ['contact_emails_email_trgm', 'contacts_name_trgm'],
  );
  assert.match(rows[1]!.indexdef, /gin \(lower\(name\) gin_trgm_ops\)/);
});

test('PostgreSQL reads a rare text through the trigram index, with the same answer', async (ctx) => {
  if (t.db.engine === 'sqlite') return ctx.skip('PostgreSQL only');
  const { id: accountId } = await makeAccount(t.db);
  const rare = uniq('rare');
  await makeContact(t.db, accountId, { name: `Someone ${rare}` });
  assert.equal((await countContacts(t.db, accountId, { q: rare })).count, 1);
  // The planner prefers the index for a rare pattern once sequential scans are off the table.
  const plan = await t.db.kysely.transaction().execute(async (tx) => {
    await sql`set local enable_seqscan = off`.execute(tx);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`
      explain select id from contacts where lower(name) like ${`%${rare}%`}`.execute(tx);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  assert.match(plan, /contacts_name_trgm/);
});
