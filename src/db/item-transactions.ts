import { sql } from 'kysely';
import type { Db } from './connect.js';
import { inTransaction, type Tx, withUniqueRetry } from './transaction.js';

/** What one item of a batch came to: its value, or the error that undid it. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Items one SQLite transaction carries. The chunks of a batch are queued together, so they
 * still share commits (one fsync for up to 64 of them), but an urgent write (a send's outcome)
 * waits for one chunk, never for a whole batch of 1,000 items.
 */
export const ITEMS_PER_TRANSACTION = 100;

/**
 * Applies `apply` to each item, in order, each item atomic on its own: an item that throws
 * leaves no trace and the others are kept (the outcome list says which did what).
 *
 * The items run in chunks of ITEMS_PER_TRANSACTION, one transaction each, with savepoints so
 * that a failed item is rolled back alone (applyChunk).
 *
 * SQLite (one writer, every commit an fsync): all chunks are queued in the commit queue at
 * once, in order: 1,000 items are 10 jobs, in one or two commits, with no HTTP request, key
 * check or body parse of their own.
 *
 * PostgreSQL: the chunks run one after the other. The single endpoints' race rules hold inside
 * a chunk: a lost race on a new address is a unique violation of that item, rolled back to its
 * savepoint and retried (READ COMMITTED: the retry sees the winner's row and updates it). A
 * chunk holds the row locks of its contacts until it commits, so two batches touching the same
 * contacts in different orders can deadlock: PostgreSQL then aborts one of them, whose chunk is
 * rolled back whole and run again one transaction per item, exactly as the single endpoint.
 */
export async function applyEach<I, R>(db: Db, items: readonly I[], apply: (tx: Tx, item: I) => Promise<R>): Promise<ItemOutcome<R>[]> {
  const chunks: I[][] = [];
  for (let i = 0; i < items.length; i += ITEMS_PER_TRANSACTION) chunks.push(items.slice(i, i + ITEMS_PER_TRANSACTION));
  const inChunk = async (chunk: I[]): Promise<ItemOutcome<ItemOutcome<R>[]>> => {
    try {
      return { ok: true, value: await inTransaction(db, (tx) => applyChunk(tx, chunk, apply)) };
    } catch (error) {
      return { ok: false, error };
    }
  };
  let done: ItemOutcome<ItemOutcome<R>[]>[];
  if (db.engine === 'sqlite') {
    done = await Promise.all(chunks.map(inChunk));
  } else {
    done = [];
    for (const chunk of chunks) {
      const outcome = await inChunk(chunk);
      if (outcome.ok || !isTransactionWide(outcome.error)) done.push(outcome);
      else done.push({ ok: true, value: await oneTransactionEach(db, chunk, apply) });
    }
  }
  // A chunk whose transaction failed as a whole (its commit, an I/O error) kept none of its items.
  return done.flatMap((chunk, i) => (chunk.ok ? chunk.value : chunks[i]!.map(() => ({ ok: false as const, error: chunk.error }))));
}

/**
 * Every item in the caller's one transaction, each atomic on its own (savepoints, as a chunk):
 * for a batch sent with an Idempotency-Key, whose answer is stored in the transaction of its
 * whole effect.
 */
export function applyEachInTransaction<I, R>(
  tx: Tx,
  items: readonly I[],
  apply: (tx: Tx, item: I) => Promise<R>,
): Promise<ItemOutcome<R>[]> {
  return applyChunk(tx, items, apply);
}

/** PostgreSQL, after a deadlock: each item alone, as `POST /api/leads` runs it. */
async function oneTransactionEach<I, R>(db: Db, items: readonly I[], apply: (tx: Tx, item: I) => Promise<R>): Promise<ItemOutcome<R>[]> {
  const outcomes: ItemOutcome<R>[] = [];
  for (const item of items) {
    try {
      outcomes.push({ ok: true, value: await withUniqueRetry(() => inTransaction(db, (tx) => apply(tx, item))) });
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  }
  return outcomes;
}

/** PostgreSQL's deadlock and serialization failures: the transaction, not the item, is at fault. */
function isTransactionWide(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * The items of one chunk, in order. Optimistic: a run of items shares one savepoint, as
 * most items succeed; when one fails, the run is rolled back, its items before the failed one
 * are applied again one savepoint each, then the failed one too (the careful path, which
 * decides its outcome), and a new run starts after it. Each item's outcome is that of the
 * careful path or of a run that succeeded whole, on the same database state either way: the
 * items before it in the batch, applied. At most twice the work with failures, two statements
 * fewer per item without.
 */
async function applyChunk<I, R>(tx: Tx, chunk: readonly I[], apply: (tx: Tx, item: I) => Promise<R>): Promise<ItemOutcome<R>[]> {
  const outcomes: ItemOutcome<R>[] = [];
  // On PostgreSQL a unique violation is a lost race on a new address: retried after the rollback
  // to the savepoint, the item sees the winner's row (READ COMMITTED) and updates it, as a
  // single call does. On SQLite (one writer) it cannot be a race, and the retry only repeats.
  const carefully = (item: I) => settle(() => withUniqueRetry(() => inSavepoint(tx, () => apply(tx, item))));
  let start = 0;
  while (start < chunk.length) {
    const run: R[] = [];
    const failedAt = await inSavepoint(tx, async () => {
      for (let i = start; i < chunk.length; i++) {
        try {
          run.push(await apply(tx, chunk[i]!));
        } catch {
          throw new RunFailed(i);
        }
      }
      return undefined;
    }).catch((err: unknown) => {
      if (err instanceof RunFailed) return err.at;
      throw err;
    });
    if (failedAt === undefined) {
      for (const value of run) outcomes.push({ ok: true, value });
      return outcomes;
    }
    for (let i = start; i <= failedAt; i++) outcomes.push(await carefully(chunk[i]!));
    start = failedAt + 1;
  }
  return outcomes;
}

/** The item of an optimistic run that failed (the run is rolled back by inSavepoint). */
class RunFailed extends Error {
  constructor(readonly at: number) {
    super(`item ${at} of the run failed`);
  }
}

/** Thrown when SQLite abandoned the whole transaction: no item of it can be kept. */
class TransactionLost extends Error {
  constructor(readonly reason: unknown) {
    super('the transaction was rolled back as a whole');
  }
}

/** The outcome of fn; a lost transaction or a deadlock is not an item's outcome: it fails the whole chunk. */
async function settle<R>(fn: () => Promise<R>): Promise<ItemOutcome<R>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    if (error instanceof TransactionLost) throw error.reason;
    // A deadlock is the whole chunk's: it is rolled back and run again (applyEach).
    if (isTransactionWide(error)) throw error;
    return { ok: false, error };
  }
}

/**
 * Runs fn inside a savepoint of the open transaction, rolled back to it when fn throws (and the
 * error thrown on). When even that fails, SQLite has abandoned the whole transaction (I/O
 * error, out of memory): TransactionLost, so the chunk's transaction fails.
 */
async function inSavepoint<R>(tx: Tx, fn: () => Promise<R>): Promise<R> {
  // Nested savepoints of one name are fine: release and rollback to name the innermost.
  await sql.raw('savepoint herald_item').execute(tx);
  let value: R;
  try {
    value = await fn();
  } catch (error) {
    try {
      await sql.raw('rollback to herald_item').execute(tx);
      await sql.raw('release herald_item').execute(tx);
    } catch (lost) {
      throw new TransactionLost(lost);
    }
    throw error;
  }
  await sql.raw('release herald_item').execute(tx);
  return value;
}
