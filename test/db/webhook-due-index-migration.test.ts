import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Kysely, Migrator, sql } from 'kysely';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { withDatabase } from './migration-db.js';

/**
 * 0025 gives the webhook queue's index the id, the claim's tie-break (deliveries.repo.ts,
 * claimDue), so a claim reads its limit in order instead of sorting every due delivery; down
 * restores the two-column index.
 */
test('0025 orders webhook_deliveries_due by status, due time and id; down restores (status, due time)', async () => {
  await withDatabase(async (db, schema) => {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, migrationTableSchema: schema });
    assert.equal((await migrator.migrateTo('0025_webhook_deliveries_due_id')).error, undefined);
    assert.deepEqual(await dueIndexColumns(db, schema), ['status', 'next_attempt_at', 'id']);
    assert.equal((await migrator.migrateTo('0024_sends_wake_at')).error, undefined);
    assert.deepEqual(await dueIndexColumns(db, schema), ['status', 'next_attempt_at']);
  });
});

/** The columns of webhook_deliveries_due, in index order. */
async function dueIndexColumns(db: Kysely<any>, schema?: string): Promise<string[]> {
  const { rows } = schema
    ? await sql<{ name: string }>`select a.attname as name
        from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
        cross join lateral unnest(i.indkey) with ordinality as k(attnum, ord)
        join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
       where c.relname = 'webhook_deliveries_due' and n.nspname = ${schema} order by k.ord`.execute(db)
    : await sql<{ name: string }>`select name from pragma_index_info('webhook_deliveries_due') order by seqno`.execute(db);
  return rows.map((r) => r.name);
}
