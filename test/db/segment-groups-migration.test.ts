import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { MIGRATIONS } from '../../src/db/migrate.js';

/**
 * 0015 rewrites saved segment criteria of the form before groups into one group, and its
 * `down` turns them back (deleting what the old form cannot say). Runs on the engine of
 * DATABASE_URL, in a schema of its own on PostgreSQL.
 */
async function withDatabase(run: (db: Kysely<any>, schema?: string) => Promise<void>): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const dir = mkdtempSync(join(tmpdir(), 'herald-migration-'));
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(join(dir, 'm.db')) }) });
    try {
      await run(db);
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const schema = `segment_migration_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1, options: `-c search_path=${schema}` }) }),
  });
  try {
    await run(db, schema);
  } finally {
    await db.destroy();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}

test('0015 turns old criteria into one group, and back', async () => {
  await withDatabase(async (db, schema) => {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, migrationTableSchema: schema });
    const before = Object.keys(MIGRATIONS).filter((name) => name < '0015');
    assert.equal((await migrator.migrateTo(before.at(-1)!)).error, undefined);
    await sql`insert into accounts (id, name, plan, created_at) values ('acc_1', 'A', 'free', 0)`.execute(db);
    const old = {
      seg_event: { event: { type: 'purchase', withinDays: 30, metadata: { key: 'plan', value: 'pro' } }, tags: ['vip'] },
      seg_fields: { fields: [{ name: 'City', value: 'Paris' }] },
      seg_empty: {},
    };
    for (const [id, criteria] of Object.entries(old))
      await db
        .insertInto('segments')
        .values({ id, account_id: 'acc_1', name: id, criteria: JSON.stringify(criteria), created_at: 0, updated_at: 0 })
        .execute();

    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const saved = async () =>
      Object.fromEntries(
        (await db.selectFrom('segments').select(['id', 'criteria']).orderBy('id').execute()).map((r) => [r.id, JSON.parse(r.criteria)]),
      );
    assert.deepEqual(await saved(), {
      seg_empty: { groups: [{}] },
      seg_event: { groups: [{ events: [old.seg_event.event], tags: ['vip'] }] },
      seg_fields: { groups: [{ fields: [{ name: 'City', value: 'Paris' }] }] },
    });

    // A segment only the new form can say: two groups.
    await db
      .insertInto('segments')
      .values({ id: 'seg_or', account_id: 'acc_1', name: 'or', criteria: '{"groups":[{},{}]}', created_at: 0, updated_at: 0 })
      .execute();
    // Down to the migration before 0015 (later ones go down first).
    assert.equal((await migrator.migrateTo(before.at(-1)!)).error, undefined);
    assert.deepEqual(await saved(), old);
  });
});
