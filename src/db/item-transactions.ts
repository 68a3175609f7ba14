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
 * one transaction each, every item inside a savepoint: a failed item is rolled back to its
 * savepoint alone. That is the batch endpoints' speed: 1,000 items cost ~10 savepoint
 * transactions in one or two commits instead of 1,000 commits.
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
  const done = await Promise.all(
    chunks.map((chunk) =>
      settle(() =>
        inTransaction(db, async (tx) => {
          const outcomes: ItemOutcome<R>[] = [];
          // A unique violation cannot come from a race on SQLite (one writer), so the retry only
          // repeats the item; it is kept so that an item runs exactly as its single call does.
          for (const item of chunk) outcomes.push(await settle(() => withUniqueRetry(() => inSavepoint(tx, () => apply(tx, item)))));
          return outcomes;
        }),
      ),
    ),
  );
  // A chunk whose transaction failed as a whole (its commit, an I/O error) kept none of its items.
  return done.flatMap((chunk, i) => (chunk.ok ? chunk.value : chunks[i]!.map(() => ({ ok: false as const, error: chunk.error }))));
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
