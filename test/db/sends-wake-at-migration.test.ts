import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { seedSendParents, withDatabase } from './migration-db.js';

/**
 * 0024 moves the queue's index to `wake_at` (docs/decisions.md, "A restart leaves the queue's
 * index alone"). The waiting sends of an existing table wake when they are due, so the first
 * claims after an upgrade do not re-arm each of them; the others keep the default; down puts
 * the `(status, due_at)` index back.
 */
test('0024 gives waiting sends their due time as wake time, and down restores the due-time index', async () => {
  await withDatabase(async (db, schema) => {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, migrationTableSchema: schema });
    assert.equal((await migrator.migrateTo('0023_sends_counted')).error, undefined);
    await seedSendParents(db);
    const sends = [
      ['snd_pending', 'pending', 500],
      ['snd_queued', 'queued', 300],
      ['snd_sent', 'sent', 100],
    ] as const;
    for (const [id, status, dueAt] of sends)
      await sql`insert into sends (id, account_id, campaign_id, contact_id, status, channel, due_at, attempts, created_at, updated_at)
        values (${id}, 'acc_1', 'cmp_1', 'ld_1', ${status}, 'email', ${dueAt}, 0, 0, 0)`.execute(db);

    assert.equal((await migrator.migrateTo('0024_sends_wake_at')).error, undefined);
    const { rows } = await sql<{ id: string; wake_at: number }>`select id, wake_at from sends order by id`.execute(db);
    assert.deepEqual(
      rows.map((r) => [r.id, Number(r.wake_at)]),
      [
        ['snd_pending', 500],
        ['snd_queued', 300],
        ['snd_sent', 0],
      ],
    );
    assert.deepEqual(await sendsIndexes(db, schema), ['sends_wake']);

    assert.equal((await migrator.migrateTo('0023_sends_counted')).error, undefined);
    assert.deepEqual(await sendsIndexes(db, schema), ['sends_due']);
    const { rows: columns } = schema
      ? await sql<{ name: string }>`select column_name as name from information_schema.columns
          where table_schema = ${schema} and table_name = 'sends'`.execute(db)
      : await sql<{ name: string }>`select name from pragma_table_info('sends')`.execute(db);
    assert.ok(columns.length > 0 && !columns.some((c) => c.name === 'wake_at'), 'down drops the column');
  });
});

/** Which of the two queue indexes `sends` has. */
async function sendsIndexes(db: Parameters<Parameters<typeof withDatabase>[0]>[0], schema?: string): Promise<string[]> {
  const { rows } = schema
    ? await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = ${schema} and tablename = 'sends'`.execute(db)
    : await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'sends'`.execute(db);
  return rows
    .map((r) => r.name)
    .filter((name) => name === 'sends_due' || name === 'sends_wake')
    .sort();
}
