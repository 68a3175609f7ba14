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
 * SQLite (one writer, every commit an fsync): the items run in chunks of ITEMS_PER_TRANSACTION,
 * one transaction each, with savepoints so that a failed item is rolled back alone (applyChunk):
 * 1,000 items are 10 jobs of the commit queue, in one or two commits, with no
 * HTTP request, key check or body parse of their own.
 *
 * PostgreSQL: each item is a transaction of its own, exactly as its single endpoint runs it
 * (one after the other, so a later item sees an earlier one). A transaction that spanned items
 * would hold each contact's row lock until the end of the batch: two batches touching the same
 * contacts in different orders would deadlock, and the single endpoints' race rules (a lost race
 * on a new address retries and then updates) are written for one contact per transaction.
 */
export async function applyEach<I, R>(db: Db, items: readonly I[], apply: (tx: Tx, item: I) => Promise<R>): Promise<ItemOutcome<R>[]> {
  if (db.engine === 'postgres') {
    const outcomes: ItemOutcome<R>[] = [];
    for (const item of items) outcomes.push(await settle(() => withUniqueRetry(() => inTransaction(db, (tx) => apply(tx, item)))));
    return outcomes;
  }
  const chunks: I[][] = [];
  for (let i = 0; i < items.length; i += ITEMS_PER_TRANSACTION) chunks.push(items.slice(i, i + ITEMS_PER_TRANSACTION));
  // All chunks are queued at once, in order: the commit queue runs them one after the other.
  const done = await Promise.all(chunks.map((chunk) => settle(() => inTransaction(db, (tx) => applyChunk(tx, chunk, apply)))));
  // A chunk whose transaction failed as a whole (its commit, an I/O error) kept none of its items.
  return done.flatMap((chunk, i) => (chunk.ok ? chunk.value : chunks[i]!.map(() => ({ ok: false as const, error: chunk.error }))));
}

/**
 * The items of one SQLite chunk, in order. Optimistic: a run of items shares one savepoint, as
 * most items succeed; when one fails, the run is rolled back, its items before the failed one
 * are applied again one savepoint each, then the failed one too (the careful path, which
 * decides its outcome), and a new run starts after it. Each item's outcome is that of the
 * careful path or of a run that succeeded whole, on the same database state either way: the
 * items before it in the batch, applied. At most twice the work with failures, two statements
 * fewer per item without.
 */
async function applyChunk<I, R>(tx: Tx, chunk: readonly I[], apply: (tx: Tx, item: I) => Promise<R>): Promise<ItemOutcome<R>[]> {
  const outcomes: ItemOutcome<R>[] = [];
  // A unique violation cannot come from a race on SQLite (one writer), so the retry only
  // repeats the item; it is kept so that an item runs exactly as its single call does.
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

/** The outcome of fn; a lost transaction is not an item's outcome: it fails the whole chunk. */
async function settle<R>(fn: () => Promise<R>): Promise<ItemOutcome<R>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    if (error instanceof TransactionLost) throw error.reason;
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
