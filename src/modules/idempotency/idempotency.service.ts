import type { Db } from '../../db/connect.js';
import { inTransaction, type Tx } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import * as repo from './idempotency.repo.js';

/**
 * Idempotency keys (issue 10, decisions.md "Idempotent retries"): a public API request sent
 * with an `Idempotency-Key` has its answer stored in the transaction of its effect, so after a
 * lost answer (timeout, restart) a retry with the same key answers the stored one and does
 * nothing else. Only answers of committed effects are stored: an error rolls back everything,
 * the claim included, so a retry simply runs again.
 */

/** How long a key's answer is kept: a retry after that runs again as a new request. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** A request sent with an Idempotency-Key, as the HTTP layer hands it to the service. */
export interface IdempotentRequest {
  readonly db: Db;
  readonly accountId: string;
  /** As sent: 1 to 255 visible ASCII characters. */
  readonly key: string;
  /** SHA-256 (hex) of the method, the route and the canonical JSON body. */
  readonly fingerprint: string;
}

/**
 * A batch request sent with an Idempotency-Key: the key, and how the items' outcomes become the
 * 200 body the handler sends (the batch route's results, those of items refused before the
 * write included), which is the answer stored.
 */
export interface IdempotentBatch<R> {
  readonly request: IdempotentRequest;
  readonly answer: (outcomes: R) => unknown;
}

/**
 * Thrown inside the effect's transaction when the key was already claimed: the transaction
 * rolls back (nothing of this request happened) and the HTTP layer answers with
 * `answerForTakenKey` once the transaction is over.
 */
export class IdempotencyKeyTaken extends Error {
  constructor(readonly request: IdempotentRequest) {
    super('Idempotency-Key already claimed');
  }
}

/**
 * Runs a request's effect at most once per key: call it inside the effect's transaction
 * (the same `tx` as every write of the effect), with the whole effect as `work`. The key is
 * claimed by the transaction's first statement and the answer (`answer(result)`, by default the
 * result itself, which must be the 200 body the handler sends) stored by its last, so both
 * commit or roll back with the effect. Without a key it is just `work()`.
 */
export async function oncePerKey<T>(
  tx: Tx,
  request: IdempotentRequest | undefined,
  work: () => Promise<T>,
  answer: (result: T) => unknown = (result) => result,
): Promise<T> {
  if (!request) return work();
  const now = Date.now();
  const claimed = await repo.claimKey(tx, request.db.engine, request.accountId, {
    key: request.key,
    fingerprint: request.fingerprint,
    now,
    expiredBy: now - IDEMPOTENCY_TTL_MS,
  });
  if (!claimed) throw new IdempotencyKeyTaken(request);
  const result = await work();
  await repo.storeAnswer(tx, request.accountId, request.key, 200, JSON.stringify(answer(result)));
  return result;
}

/**
 * What a request whose key was taken answers, read after its own transaction is over (on
 * SQLite the read waits for the commit in progress, so a replay is never of an answer that
 * could still be rolled back): the stored answer when the first request committed with the
 * same fingerprint, 422 when it was a different request, 409 while the first is still running
 * (or if it has just failed: then a retry runs).
 */
export async function answerForTakenKey(request: IdempotentRequest): Promise<{ status: number; body: unknown }> {
  const row = await repo.findLiveKey(request.db, request.accountId, request.key, Date.now() - IDEMPOTENCY_TTL_MS);
  if (row !== undefined && row.fingerprint !== request.fingerprint) throw new AppError('IDEMPOTENCY_KEY_REUSED');
  if (row?.status == null || row.body === null) throw new AppError('IDEMPOTENCY_KEY_IN_USE');
  return { status: row.status, body: JSON.parse(row.body) };
}

/** Drops every account's expired keys; returns how many. */
export async function purgeExpiredKeys(db: Db, now: number): Promise<number> {
  return inTransaction(db, (tx) => repo.deleteExpiredKeys(tx, now - IDEMPOTENCY_TTL_MS));
}
