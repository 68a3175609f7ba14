import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/connect.js';
import { AppError } from '../errors.js';
import {
  answerForTakenKey,
  type IdempotencyKeyTaken,
  type IdempotentRequest,
  purgeExpiredKeys,
} from '../modules/idempotency/idempotency.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on an `idempotent` route when the request carries an Idempotency-Key: hand it to the service. */
    idempotency?: IdempotentRequest;
  }
  interface FastifyContextConfig {
    /**
     * The route takes an `Idempotency-Key` header: its handler passes `request.idempotency` to
     * the service, which runs its effect through `oncePerKey` inside the effect's transaction.
     */
    idempotent?: boolean;
  }
}

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Visible ASCII only (no space): a key is an opaque token, typically a UUID. */
const KEY_PATTERN = /^[\x21-\x7e]+$/;
/** The purge of expired keys runs at most this often per process, piggybacked on a keyed request. */
const PURGE_EVERY_MS = 60_000;

/** The `details` path of a bad key: the header's name (it is no member of the body). */
export const KEY_DETAILS_PATH = 'Idempotency-Key';

/** The route's Idempotency-Key: undefined when not sent; 400 when empty, too long or not visible ASCII. */
export function readIdempotencyKey(request: FastifyRequest): string | undefined {
  const value = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (value === undefined) return undefined;
  // A header sent twice reaches us joined with ", ": the space makes it invalid, as it should be.
  if (typeof value !== 'string' || value.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY_PATTERN.test(value)) {
    throw new AppError('VALIDATION', {
      details: [{ path: KEY_DETAILS_PATH, message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters` }],
    });
  }
  return value;
}

/** JSON with object members sorted at every level, so the member order of a body does not matter. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What makes two requests "the same": method, route and body (members in any order). */
export function requestFingerprint(method: string, route: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${route}\n${canonicalJson(body)}`)
    .digest('hex');
}

/**
 * preHandler of the app (after the key, the body and the NUL checks): on an `idempotent`
 * route with an Idempotency-Key, sets `request.idempotency`. Routes without the flag (GET
 * forms, the admin API) ignore the header. Now and then it also purges expired keys, in the
 * background: expired rows are ignored by every read anyway.
 */
export function createIdempotencyHook(db: Db) {
  let lastPurge = 0;
  // A callback hook: routes without the flag, and requests without the header, cost no promise.
  return function idempotencyKey(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
    const route = request.routeOptions;
    if (!route.config.idempotent) {
      done();
      return;
    }
    const key = readIdempotencyKey(request);
    if (key === undefined) {
      done();
      return;
    }
    request.idempotency = {
      db,
      accountId: request.apiKey.accountId,
      key,
      fingerprint: requestFingerprint(request.method, route.url ?? request.url, request.body),
    };
    const now = Date.now();
    if (now - lastPurge >= PURGE_EVERY_MS) {
      lastPurge = now;
      purgeExpiredKeys(db, now).catch((err: unknown) => request.log.warn({ err }, 'idempotency key purge failed'));
    }
    done();
  };
}

/** The error handler's answer to IdempotencyKeyTaken: the stored answer marked as replayed, or 409/422 (thrown). */
export async function replayTakenKey(reply: FastifyReply, taken: IdempotencyKeyTaken): Promise<FastifyReply> {
  const stored = await answerForTakenKey(taken.request);
  return reply.code(stored.status).header(IDEMPOTENT_REPLAYED_HEADER, 'true').send(stored.body);
}
