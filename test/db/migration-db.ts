import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
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
