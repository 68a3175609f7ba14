import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { startTestApp, type TestApp } from '../helpers/app.js';

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
  assert.match(rows[1]!.indexdef, /gin \(lower\(name\) (\w+\.)?gin_trgm_ops\)/);
});
