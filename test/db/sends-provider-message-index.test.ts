import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { inTransaction } from '../../src/db/transaction.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * Migration 0020: `sends_provider_message` holds only sends that have a provider's message id
 * (a send is created without one), and the one look-up by that id, a WhatsApp status
 * callback's wamid, still reads it. Runs on the engine of DATABASE_URL.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const lookup = sql`select id from sends where provider_message_id = ${'wamid.test'} and account_id = ${'acc_x'} and channel = ${'whatsapp'}`;

test('the index of provider message ids leaves out the sends without one', async () => {
  if (t.db.engine === 'sqlite') {
    const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where name = 'sends_provider_message'`.execute(t.db.kysely);
    assert.match(rows[0]!.sql, /where "provider_message_id" is not null/i);
    return;
  }
  const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'sends_provider_message'`.execute(
    t.db.kysely,
  );
  assert.match(rows[0]!.indexdef, /WHERE \(provider_message_id IS NOT NULL\)/);
});

test('a look-up by provider message id reads that index', async () => {
  if (t.db.engine === 'sqlite') {
    const { rows } = await sql<{ detail: string }>`explain query plan ${lookup}`.execute(t.db.kysely);
    assert.ok(
      rows.some((r) => r.detail.includes('sends_provider_message')),
      rows.map((r) => r.detail).join('; '),
    );
    return;
  }
  // An empty test table is cheapest to scan: plans with scans off show which index the planner can use.
  const plan = await inTransaction(t.db, async (tx) => {
    await sql`set local enable_seqscan = off`.execute(tx);
    await sql`set local enable_bitmapscan = off`.execute(tx);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${lookup}`.execute(tx);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  assert.match(plan, /sends_provider_message/);
});
