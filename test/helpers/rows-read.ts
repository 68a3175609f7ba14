import pg from 'pg';
import type { Config } from '../../src/config.js';
import { type Db, openDatabase } from '../../src/db/connect.js';

/**
 * PostgreSQL only: the rows of `table` that `work` read, by any plan (sequential scans, index and
 * bitmap scans), run on a database connection of its own after an ANALYZE of the table, so the
 * plan is the one a table with statistics gets. A server process publishes its statistics when
 * it ends, so that connection is closed before they are read. Tests prove with it that a claim's
 * cost does not grow with a backlog.
 */
export async function rowsRead(config: Config, table: string, work: (db: Db) => Promise<void>): Promise<number> {
  const query = async (text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: config.databaseUrl! });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  const reads = async () => {
    const [row] = await query('select (seq_tup_read + coalesce(idx_tup_fetch, 0))::int as n from pg_stat_user_tables where relname = $1', [
      table,
    ]);
    return row.n as number;
  };
  await query(`analyze ${table}`);
  const before = await reads();
  const db = await openDatabase(config, { poolSize: 1 });
  try {
    await work(db);
  } finally {
    await db.close();
  }
  for (let i = 0; i < 50; i++) {
    const after = await reads();
    if (after > before) return after - before;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the statistics of ${table} did not move`);
}
