import type { Kysely } from 'kysely';
import type { Db } from './connect.js';
import { controlLater, inPgTransaction, poolOf } from './pg-transaction.js';
import type { Database } from './schema.js';

/**
 * A long read of the admin panel (a segment's count over every contact) on PostgreSQL: in a
 * transaction of its own whose settings end with it (`set_config(..., true)` is `set local`:
 * nothing outlives the read on the connection, so PgBouncer in transaction mode is fine). Two
 * settings, in the read's first round trip (with its BEGIN: pg-transaction.ts):
 *
 * - **No JIT.** A segment count is estimated far above `jit_above_cost` (its hashed subplans
 *   over 100,000 contacts), so PostgreSQL compiled it before running it: 19–66 ms of a
 *   150–280 ms count went to LLVM (auto_explain, bench/admin-queries.ts). Herald's reads are
 *   built to take well under a second, where compiling never pays for itself.
 * - **`oneCore`: no parallel workers.** For a read its caller already runs side by side with
 *   others (the segment list's counts, two at a time): each takes one core of the server, not
 *   three (`max_parallel_workers_per_gather` defaults to 2), so the list takes two cores however
 *   many segments it counts, and its counts do not contend with each other's workers.
 *
 * SQLite has neither (and its reader threads refuse transactions): the read runs as it is.
 * Why and what it measured: docs/decisions.md, "Segments that lead somewhere" (the counts).
 */
export function longRead<T>(db: Db, read: (q: Kysely<Database>) => Promise<T>, { oneCore = false } = {}): Promise<T> {
  if (db.engine === 'sqlite') return read(db.reads);
  const parallel = oneCore ? `, set_config('max_parallel_workers_per_gather', '0', true)` : '';
  // The settings go with the read's BEGIN and the read itself: one round trip, then the COMMIT.
  return inPgTransaction(poolOf(db.pool), async (connection) => {
    await controlLater(connection.kysely, `select set_config('jit', 'off', true)${parallel}`);
    return read(connection.kysely);
  });
}
