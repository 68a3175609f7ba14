import pg from 'pg';

/**
 * Stands in for PostgreSQL's autovacuum on a server that runs without it (this machine's CI
 * configuration has `autovacuum = off`): VACUUM ANALYZE of the bench's database, so the dispatch
 * and sustained lines measure the queue as a production server keeps it, not the dead rows every
 * earlier line and run left behind. A claim steps over every dead entry at the front of the
 * queue's index: on a database reused for a day of runs without a vacuum, the two-worker burst
 * fell to 316 sends/s, and was 1,131 right after one (2026-11-29). True when it vacuumed.
 */
export async function vacuumUnlessAutovacuum(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ autovacuum: string }>('show autovacuum');
    if (rows[0]?.autovacuum === 'on') return false;
    await client.query('vacuum analyze');
    return true;
  } finally {
    await client.end();
  }
}

export const VACUUM_NOTE =
  "PostgreSQL's autovacuum is off on this server: VACUUM ANALYZE of the database before the dispatch and the sustained lines (bench/vacuum.ts), as autovacuum keeps it in production";
