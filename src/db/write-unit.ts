import type { Db } from './connect.js';
import { inTransaction, isUniqueViolation, type Tx } from './transaction.js';

/**
 * Thrown by a guarded write (see inWriteUnit) that found what its unit read has changed since:
 * another request got there first. The unit runs again from its read.
 */
export class StaleRead extends Error {
  constructor(what: string) {
    super(`stale read: ${what} changed since the unit read it`);
  }
}

/** How a unit is being run. */
export interface UnitContext {
  /**
   * True inside a transaction on PostgreSQL: a unit whose read does not lock what it guards
   * takes that row's lock first, in a statement of its own (a read in the locking statement
   * would see other tables as at its start, before the write it waited for: the READ COMMITTED
   * trap of decisions.md), so a retry waits for the winner instead of racing it again.
   */
  lockFirst: boolean;
}

/**
 * PostgreSQL broke a deadlock by aborting this unit's statement or transaction (nothing of it
 * was written): two units took the same rows in opposite orders. A trigger takes the contact's
 * row before the send's everywhere (a `lead`-object restart too, since trigger-write.repo.ts
 * locks the contact first: decisions.md), so this is a safety net for other writers' orders.
 * Running it again is safe.
 */
function isDeadlock(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '40P01';
}

/** How many times a unit runs before a lost race becomes the caller's error. */
const ATTEMPTS = 8;

/**
 * A public write as one unit of work, in at most two round trips on PostgreSQL (issue 12).
 *
 * The unit reads everything its rules need in ONE statement, decides in TypeScript (the one set
 * of rules, shared by both engines), then applies the decision in ONE statement (a
 * data-modifying CTE on PostgreSQL). On PostgreSQL the two statements run on their own,
 * autocommit, with no BEGIN and COMMIT: the write statement is atomic by itself, and it is
 * guarded: it changes anything only if what the decision rested on is unchanged (a condition
 * on the row that serialises the rule, which PostgreSQL re-checks on the newest version of the
 * row once it holds its lock). A guard that fails throws StaleRead and the unit runs again
 * from its read, as does a lost race on a unique constraint; that retry runs in a transaction
 * (see run below), so contention costs the old round trips, never a herd of retries.
 *
 * On SQLite the unit runs in one transaction (a group commit shared with the requests that
 * arrived with it), where nothing can change between the read and the write: the guards
 * always pass there. `transaction: true` (a request with an Idempotency-Key, whose answer is
 * stored with its effect) runs it in a transaction on PostgreSQL too.
 *
 * The first attempt's statements on PostgreSQL go through the group commit (db/postgres-group-commit.ts):
 * under load, the statements of several requests share one write and one commit.
 */
export async function inWriteUnit<T>(
  db: Db,
  unit: (q: Tx, context: UnitContext) => Promise<T>,
  options: { transaction?: boolean } = {},
): Promise<T> {
  // Only the first attempt runs without a transaction. A unit that lost a race is on a contended
  // row: run again alone, it could lose again and again (each round, of N writers reading one
  // version, one wins), so it runs again in a transaction, where a read that locks what it
  // guards (SELECT ... FOR UPDATE) keeps the lock to the commit and the guard cannot fail.
  const run = (attempt: number) =>
    db.engine === 'postgres' && !options.transaction && attempt === 1
      ? unit(db.grouped, { lockFirst: false })
      : inTransaction(db, (tx) => unit(tx, { lockFirst: db.engine === 'postgres' }));
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(attempt);
    } catch (err) {
      if (attempt >= ATTEMPTS || !(err instanceof StaleRead || isUniqueViolation(err) || isDeadlock(err))) throw err;
    }
  }
}
