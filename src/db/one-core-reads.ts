import { type Kysely, sql } from 'kysely';
import type { Engine } from './connect.js';
import type { Database } from './schema.js';

/**
 * A long read that its caller already runs side by side with others (the segment list's counts,
 * two at a time), planned on PostgreSQL without parallel workers: each read then takes one core
 * of the server, not three (`max_parallel_workers_per_gather` defaults to 2), so the list takes
 * two cores however many segments it counts, and its counts do not contend with each other's
 * workers. `set local` ends with the read's transaction: nothing outlives it on the connection,
 * so PgBouncer in transaction mode is fine. SQLite never plans parallel reads (and its reader
 * threads refuse transactions): the read runs as it is.
 *
 * The six-segment list of bench/admin-queries.ts on PostgreSQL, 2 cores, alternated runs:
 * 215–237 / 235–279 ms p50 / p95 with this, 235–249 / 251–272 without (docs/decisions.md).
 */
export function onOneCore<T>(db: Kysely<Database>, engine: Engine, read: (q: Kysely<Database>) => Promise<T>): Promise<T> {
  if (engine === 'sqlite') return read(db);
  return db.transaction().execute(async (tx) => {
    await sql`set local max_parallel_workers_per_gather = 0`.execute(tx);
    return read(tx);
  });
}
