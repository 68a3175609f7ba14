import type { CompiledQuery } from 'kysely';
import { chunksOf } from '../chunks.js';
import type { Db } from './connect.js';
import { controlLater, QueuedStatementFailed, rollbackToSavepoint, takeBack } from './pg-transaction.js';
import { failedStatementIndex, inPipelinedTransaction, type Pipeline } from './pipeline.js';
import { inTransaction, type Tx, withUniqueRetry } from './transaction.js';

/** What one item of a batch came to: its value, or the error that undid it. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * An item as ONE statement decided before anything is read, to be sent with its neighbours' in
 * one round trip on PostgreSQL (db/pipeline.ts); `plan` gives it, or undefined for an item that
 * must be applied on its own (`apply`). Planning writes nothing; a throw is the item's outcome.
 */
export type Plan<I, R> = (tx: Tx, item: I) => PlannedItem<R> | undefined;

export interface PlannedItem<R> {
  query: CompiledQuery;
  /**
   * The item's value from its statement's rows; or, when the statement did not settle the item
   * (it wrote nothing), the rest of the item's work, run on the state right after the statement.
   */
  settle(rows: readonly unknown[]): { value: R } | { rest(tx: Tx): Promise<R> };
}

/**
 * Statements in one pipeline at most. When a statement does not settle its item, it and the
 * ones sent after it run again (applyChunk): the bound keeps what one such item costs small, for
 * 4 pipelines per 100 items instead of 100 round trips. After an item that failed a run, the
 * next run's pipelines start at one statement and double while they succeed (applyChunk,
 * runItems), so a chunk where many items fail does not send 24 statements for nothing each time.
 */
export const MAX_PIPELINE = 25;

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
 * With `plan`, the items that plan a statement are sent in pipelines, MAX_PIPELINE a round trip
 * at most (applyChunk, runItems): the statements of a run that succeeds, in the same order,
 * without a round trip each.
 */
export async function applyEach<I, R>(
  db: Db,
  items: readonly I[],
  apply: (tx: Tx, item: I) => Promise<R>,
  plan?: Plan<I, R>,
): Promise<ItemOutcome<R>[]> {
  const chunks = chunksOf(items, ITEMS_PER_TRANSACTION);
  // On PostgreSQL with a plan, the items' statements go out a pipeline at a time (applyChunk).
  const pipelined = db.engine === 'postgres' && plan !== undefined;
  const inChunk = async (chunk: I[]): Promise<ItemOutcome<ItemOutcome<R>[]>> => {
    try {
      const value = pipelined
        ? await inPipelinedTransaction(db, (tx, pipeline) => applyChunk(tx, chunk, apply, { plan, pipeline, size: MAX_PIPELINE }))
        : await inTransaction(db, (tx) => applyChunk(tx, chunk, apply));
      return { ok: true, value };
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

/** What pipelines a chunk's items (PostgreSQL): the items' plan, and the pipeline of the chunk's connection. */
interface Pipelining<I, R> {
  plan: Plan<I, R>;
  pipeline: Pipeline;
  /** Statements the next pipeline may hold: MAX_PIPELINE, or fewer after a failed run (runItems). */
  size: number;
}

/**
 * The items of one chunk, in order. Optimistic: a run of items shares one savepoint, as most
 * items succeed. When one fails, the run is rolled back and the items before it are run again
 * (optimistically: they succeeded on the same state), then the failed one alone, carefully (its
 * own savepoint: the careful path decides its outcome), and a new run starts after it. Each
 * item's outcome is that of the careful path or of a run that succeeded whole, on the same
 * database state either way: the items before it in the batch, applied. At most twice the work
 * with failures, two statements fewer per item without.
 *
 * With `pipelining`, the run sends its items' statements a pipeline at a time (runItems).
 */
async function applyChunk<I, R>(
  tx: Tx,
  chunk: readonly I[],
  apply: (tx: Tx, item: I) => Promise<R>,
  pipelining?: Pipelining<I, R>,
): Promise<ItemOutcome<R>[]> {
  const outcomes: ItemOutcome<R>[] = [];
  // On PostgreSQL a unique violation is a lost race on a new address: retried after the rollback
  // to the savepoint, the item sees the winner's row (READ COMMITTED) and updates it, as a
  // single call does. On SQLite (one writer) it cannot be a race, and the retry only repeats.
  const carefully = (item: I) => settle(() => withUniqueRetry(() => inSavepoint(tx, () => apply(tx, item))));
  let start = 0;
  while (start < chunk.length) {
    // The run from `start`; after a failure at an item, the run of the items before it.
    let end = chunk.length;
    let run: ItemOutcome<R>[] = [];
    while (end > start) {
      const failedAt = await inSavepoint(tx, async () => {
        run = await runItems(tx, chunk, start, end, apply, pipelining);
        return undefined;
      }).catch((err: unknown) => {
        if (err instanceof RunFailed) return err.at;
        throw err instanceof TransactionLost ? err.reason : err;
      });
      if (failedAt === undefined) break;
      end = failedAt;
      run = [];
      // The items before the failure succeeded on this same state: their run goes out whole.
      if (pipelining) pipelining.size = MAX_PIPELINE;
    }
    outcomes.push(...run);
    if (end < chunk.length) {
      outcomes.push(await carefully(chunk[end]!));
      // More items like this one may follow: the next run starts with short pipelines.
      if (pipelining) pipelining.size = 1;
    }
    start = end + 1;
  }
  return outcomes;
}

/**
 * Items start to end - 1 of the chunk, in order, in the run's savepoint; throws RunFailed at the
 * first item that fails. With `pipelining`, consecutive items that plan a statement are sent
 * together (at most MAX_PIPELINE); an item that plans none is applied alone, between pipelines.
 * A statement that did not settle its item fails the run there, unless it was the last of its
 * pipeline (nothing after it has run yet): then the item's rest runs at once. An item whose plan
 * throws wrote nothing: the throw is its outcome and the run goes on.
 */
async function runItems<I, R>(
  tx: Tx,
  chunk: readonly I[],
  start: number,
  end: number,
  apply: (tx: Tx, item: I) => Promise<R>,
  pipelining: Pipelining<I, R> | undefined,
): Promise<ItemOutcome<R>[]> {
  const outcomes: ItemOutcome<R>[] = [];
  const applyAlone = async (i: number) => {
    try {
      outcomes.push({ ok: true, value: await apply(tx, chunk[i]!) });
    } catch (err) {
      throw failedRun(err, i);
    }
  };
  let i = start;
  while (i < end) {
    if (!pipelining) {
      await applyAlone(i++);
      continue;
    }
    const planned: PlannedItem<R>[] = [];
    const first = i;
    let refused: { error: unknown } | undefined;
    let alone = false;
    while (i < end && planned.length < pipelining.size) {
      let item: PlannedItem<R> | undefined;
      try {
        item = pipelining.plan(tx, chunk[i]!);
      } catch (error) {
        refused = { error };
        break;
      }
      if (!item) {
        alone = true;
        break;
      }
      planned.push(item);
      i++;
    }
    if (planned.length > 0) {
      await sendPipeline(tx, pipelining.pipeline, planned, first, outcomes);
      pipelining.size = Math.min(MAX_PIPELINE, 2 * pipelining.size);
    }
    if (refused) {
      outcomes.push({ ok: false, error: refused.error });
      i++;
    } else if (alone) {
      await applyAlone(i++);
    }
  }
  return outcomes;
}

/** The planned items' statements in one round trip, their outcomes pushed in order (items first, first + 1, ...). */
async function sendPipeline<R>(tx: Tx, pipeline: Pipeline, planned: PlannedItem<R>[], first: number, outcomes: ItemOutcome<R>[]) {
  let results: { rows: readonly unknown[] }[];
  try {
    results = await pipeline(planned.map((item) => item.query));
  } catch (err) {
    throw failedRun(err, first + Math.min(failedStatementIndex(err), planned.length - 1));
  }
  for (const [k, item] of planned.entries()) {
    try {
      const settled = item.settle(results[k]!.rows);
      if ('value' in settled) outcomes.push({ ok: true, value: settled.value });
      else if (k === planned.length - 1) outcomes.push({ ok: true, value: await settled.rest(tx) });
      else throw new Error('the statements after it have run');
    } catch (err) {
      throw failedRun(err, first + k);
    }
  }
}

/**
 * The error a run fails with when its item `at` failed with `err`: RunFailed, unless `err` is
 * the whole transaction's (a deadlock, which fails the chunk: applyEach runs it again, one
 * transaction per item; a queued statement's failure, which fails it for good).
 */
function failedRun(err: unknown, at: number): unknown {
  // A queued statement's failure is no item's (pg-transaction.ts): the savepoints may not exist.
  return isTransactionWide(err) || err instanceof QueuedStatementFailed ? err : new RunFailed(at);
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
 * error, out of memory): TransactionLost, so the chunk's transaction fails. On PostgreSQL the
 * SAVEPOINT and RELEASE go with the statements around them (pg-transaction.ts), and a savepoint
 * nothing was written in is never sent.
 */
async function inSavepoint<R>(tx: Tx, fn: () => Promise<R>): Promise<R> {
  // Nested savepoints of one name are fine: release and rollback to name the innermost.
  await controlLater(tx, SAVEPOINT);
  let value: R;
  try {
    value = await fn();
  } catch (error) {
    // A statement queued before the SAVEPOINT failed: it may not exist; the chunk is lost.
    if (error instanceof QueuedStatementFailed) throw new TransactionLost(error);
    try {
      if (!takeBack(tx, SAVEPOINT)) await rollbackToSavepoint(tx, 'herald_item');
    } catch (lost) {
      throw new TransactionLost(lost);
    }
    throw error;
  }
  if (!takeBack(tx, SAVEPOINT)) await controlLater(tx, 'release herald_item');
  return value;
}

const SAVEPOINT = 'savepoint herald_item';
