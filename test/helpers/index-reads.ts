import pg from 'pg';
import type { Config } from '../../src/config.js';
import { type Db, openDatabase } from '../../src/db/connect.js';

/**
 * PostgreSQL only: the entries of index `index` that `work` read, run on a database connection
 * of its own. A server process publishes its statistics when it ends, so that connection is
 * closed before they are read; a test proves a claim's cost does not grow with a backlog this way.
 */
export async function indexEntriesRead(config: Config, index: string, work: (db: Db) => Promise<void>): Promise<number> {
  const reads = async () => {
    const client = new pg.Client({ connectionString: config.databaseUrl! });
    await client.connect();
    try {
      const { rows } = await client.query('select idx_tup_read::int as n from pg_stat_user_indexes where indexrelname = $1', [index]);
      return rows[0].n as number;
    } finally {
      await client.end();
    }
  };
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
  throw new Error(`the statistics of ${index} did not move`);
}
