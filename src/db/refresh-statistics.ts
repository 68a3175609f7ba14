import { sql } from 'kysely';
import type { Db } from './connect.js';
import { inTransaction } from './transaction.js';

/**
 * Fresh planner statistics after a bulk write on PostgreSQL (docs/decisions.md, Admin reads
 * without a round trip per row). After a CSV import the statistics can still describe the
 * tables as they were before it, until autovacuum analyzes them (50 rows + 10% changed): a tag
 * filter then planned a nested loop that took 1.7 s for 3,000 contacts. SQLite keeps no
 * statistics Herald relies on (Herald never runs ANALYZE there), so this is PostgreSQL only.
 */

/** The panel imports in batches of up to 1,000 rows: one ANALYZE once the batches stop coming. */
export const ANALYZE_DELAY_MS = 2_000;

/** ANALYZE waits this long for its lock (a concurrent VACUUM or ANALYZE, a migration) and gives up rather than queue. */
const LOCK_TIMEOUT = '1s';

/**
 * ANALYZE of the tables now, in one statement. ANALYZE reads a sample (about 30,000 rows a
 * table), takes a lock that blocks neither reads nor writes, and is skipped with a warning, not
 * an error, when Herald's role does not own the tables. The statistics are the table's, not an
 * account's: nothing of one tenant reaches another.
 */
export async function analyzeTables(db: Db, tables: readonly string[]): Promise<void> {
  if (db.engine !== 'postgres' || tables.length === 0) return;
  await inTransaction(db, async (tx) => {
    await sql`set local lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(tx);
    await sql`analyze ${sql.join(tables.map((t) => sql.table(t)))}`.execute(tx);
  });
}

interface Pending {
  tables: Set<string>;
  timer: NodeJS.Timeout;
}
const pending = new WeakMap<Db, Pending>();

/**
 * ANALYZE of the tables `delayMs` after the last call for this database: the batches of one
 * import lead to one ANALYZE at its end, never one per batch, and the request that wrote them
 * does not wait for it. A failure (lock timeout, closed pool at shutdown) is only reported:
 * autovacuum analyzes the tables later anyway.
 */
export function analyzeSoon(db: Db, tables: readonly string[], onError: (error: unknown) => void, delayMs = ANALYZE_DELAY_MS): void {
  if (db.engine !== 'postgres') return;
  const waiting = pending.get(db);
  if (waiting) clearTimeout(waiting.timer);
  const all = new Set([...(waiting?.tables ?? []), ...tables]);
  const timer = setTimeout(() => {
    pending.delete(db);
    analyzeTables(db, [...all]).catch(onError);
  }, delayMs);
  // A pending ANALYZE never keeps the process alive.
  timer.unref();
  pending.set(db, { tables: all, timer });
}
