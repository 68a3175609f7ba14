import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { inTransaction } from '../../src/db/transaction.js';
import { contactsByIdsQuery } from '../../src/modules/contacts/contacts.repo.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * The events batch names its contacts by id in one IN list (findContactIdsByIds): the look-up
 * must read the primary key, one probe per id, not the account's contacts. SQLite plans without
 * statistics, and with `account_id = ?` beside the IN list it chose contacts_list (account_id)
 * and read every contact of the account (docs/performance.md, sixth session: batchsqlite). Runs
 * on the engine of DATABASE_URL.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

async function plan(query: CompiledQuery): Promise<string> {
  const raw = sql.raw(query.sql.replace(/\$\d+|\?/g, () => 'null'));
  if (t.db.engine === 'sqlite') {
    const { rows } = await sql<{ detail: string }>`explain query plan ${raw}`.execute(t.db.kysely);
    return rows.map((r) => r.detail).join('; ');
  }
  // An empty test table is cheapest to scan: plans with scans off show which index the planner can use.
  return inTransaction(t.db, async (tx) => {
    await sql`set local enable_seqscan = off`.execute(tx);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${raw}`.execute(tx);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

test("a batch's contact look-up by ids reads the primary key, not the account's contacts", async () => {
  const ids = Array.from({ length: 100 }, (_, i) => `ld_${i}`);
  const text = await plan(contactsByIdsQuery(t.db.kysely, ids).compile());
  assert.doesNotMatch(text, /contacts_list|SCAN/, text);
  assert.match(text, t.db.engine === 'sqlite' ? /sqlite_autoindex_contacts_1 \(id=\?\)/ : /contacts_pkey/, text);
});
