import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';

/**
 * A database of its own for a migration test, on the engine of DATABASE_URL: a fresh SQLite
 * file, or a schema of its own on PostgreSQL (`schema` is given to Kysely's Migrator).
 */
export async function withDatabase(run: (db: Kysely<any>, schema?: string) => Promise<void>): Promise<void> {
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
  const schema = `migration_${process.pid}_${Date.now()}`;
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

/**
 * What a send row names, for migration tests from 0011 on: account `acc_1`, its contact `ld_1`
 * and its Delay email campaign `cmp_1`, in the columns those schemas have.
 */
export async function seedSendParents(db: Kysely<any>): Promise<void> {
  await sql`insert into accounts (id, name, plan, created_at) values ('acc_1', 'A', 'free', 0)`.execute(db);
  await sql`insert into contacts (id, account_id, name, archived, opted_out, metadata, created_at, updated_at)
    values ('ld_1', 'acc_1', 'C', 0, 0, '{}', 0, 0)`.execute(db);
  await sql`insert into campaigns (id, account_id, name, channel, schedule, mode, delay_seconds, reentry, cooldown_days, active,
    whatsapp_params, webhook_secret, created_at, updated_at)
    values ('cmp_1', 'acc_1', 'N', 'email', 'api', 'delay', 60, 1, 0, 1, '[]', 'x', 0, 0)`.execute(db);
}
