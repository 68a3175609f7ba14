import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/connect.js';
import { AppError } from '../errors.js';
import { lruGet } from '../lru.js';
import { type ApiKey, checkKeyState, findKeyByValue } from '../modules/keys/keys.service.js';
import type { Scope } from '../modules/keys/scopes.js';
import { throttleAddress } from './client-address.js';
import { RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key of a public API call. */
    apiKey: ApiKey;
  }
  interface FastifyContextConfig {
    /** The scope a public API route needs; routes without it are not key-protected. */
    scope?: Scope;
    /**
     * false: the key is read from the headers only, never from the `api-key` query parameter
     * (decisions.md, Public API: the read routes answer personal data, and an address is logged
     * and kept by proxies and browsers).
     */
    keyInQuery?: false;
  }
}

/**
 * Key rows are cached for a short while so a hot key costs no query per request; the TTL
 * keeps changes made by the CLI or the panel (key switched off, scopes edited) visible
 * within 1 second, also to other processes.
 */
const CACHE_TTL_MS = 500;

/**
 * Look-ups of values that are not keys, per client address (throttleAddress): 20 at
 * once, then 1 a second (decisions.md, Hardening). Past it a guess answers 429 without
 * reaching the database. Values once found to be keys skip this throttle, so a client sharing
 * an address with a guesser keeps working with a key this process has seen.
 */
export const FAILED_LOOKUP_BURST = 20;
export const FAILED_LOOKUPS_PER_SECOND = 1;
const KNOWN_KEYS = 10_000;

export function readKeyValue(request: FastifyRequest, fromQuery = true): string | undefined {
  const header = request.headers['x-service-api-key'];
  if (typeof header === 'string' && header !== '') return header;
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  if (!fromQuery) return undefined;
  const query = (request.query as Record<string, unknown> | undefined)?.['api-key'];
  return typeof query === 'string' && query !== '' ? query : undefined;
}

/** A header-only route given its key in the query only: 401, saying where the key goes. */
const KEY_NOT_IN_QUERY = {
  details: [{ path: '/api-key', message: 'this endpoint reads the key from the x-service-api-key header (or Authorization: Bearer) only' }],
};

export function createAuthHook(db: Db, limits: { perSecond: number; burst: number }) {
  const cache = new Map<string, { key: ApiKey | undefined; at: number }>();
  const limiter = new RateLimiter(limits.perSecond, limits.burst);
  const failedLookups = new RateLimiter(FAILED_LOOKUPS_PER_SECOND, FAILED_LOOKUP_BURST);
  /** Values found to be keys (whatever their state since): least recently used dropped first. */
  const knownKeys = new Map<string, true>();
  const inFlight = new Map<string, Promise<ApiKey | undefined>>();

  /**
   * Counted against the client's address unless the value is a key already seen: the token is
   * taken before the query, so concurrent guesses cannot all slip through, and given back when
   * the value turns out to be a key. Concurrent requests with one value share one look-up (and
   * one token), so a burst with a valid key that is not cached yet is not taken for guesses.
   */
  function lookup(value: string, request: FastifyRequest, now: number): Promise<ApiKey | undefined> | ApiKey | undefined {
    const hit = cache.get(value);
    if (hit && now - hit.at < CACHE_TTL_MS) return hit.key;
    const pending = inFlight.get(value);
    if (pending) return pending;
    const known = knownKeys.has(value);
    // The client's address is parsed only when a look-up may count against it (not per request).
    const address = known ? '' : throttleAddress(request.ip);
    if (!known) {
      const wait = failedLookups.take(address, now);
      if (wait > 0) throw new AppError('RATE_LIMITED', { headers: { 'retry-after': String(wait) } });
    }
    const looked = findKeyByValue(db, value)
      .then((key) => {
        // Only known keys are cached: random guesses must not grow the map.
        if (key) {
          cache.set(value, { key, at: now });
          if (!known) failedLookups.refund(address);
          lruGet(knownKeys, KNOWN_KEYS, value, () => true);
        } else {
          cache.delete(value);
          knownKeys.delete(value);
        }
        if (cache.size > 10_000) cache.clear();
        return key;
      })
      .finally(() => inFlight.delete(value));
    inFlight.set(value, looked);
    return looked;
  }

  /** The key's quota on every answer once the key is known, errors included (docs/decisions.md). */
  function stateQuota(reply: FastifyReply, keyId: string, now: number): void {
    const { limit, remaining, reset } = limiter.quota(keyId, now);
    reply.headers({ 'ratelimit-limit': String(limit), 'ratelimit-remaining': String(remaining), 'ratelimit-reset': String(reset) });
  }

  /** The checks once the key row is known (from the cache or the database). */
  function admit(request: FastifyRequest, reply: FastifyReply, found: ApiKey | undefined, scope: Scope, now: number): void {
    let key: ApiKey;
    try {
      key = checkKeyState(found, scope, now);
    } catch (refused) {
      // A refused key (inactive, expired, out of scope) takes no token but still learns its quota.
      if (found) stateQuota(reply, found.id, now);
      throw refused;
    }
    const wait = limiter.take(key.id, now);
    stateQuota(reply, key.id, now);
    if (wait > 0) throw new AppError('RATE_LIMITED', { headers: { 'retry-after': String(wait) } });
    request.apiKey = key;
  }

  /**
   * A callback hook, not an async one: with the key cached (the usual case) it answers without
   * a promise or a turn of the microtask queue. A throw reaches Fastify's error handling like a
   * rejection would.
   */
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    const config = request.routeOptions.config;
    const scope = config.scope;
    if (!scope) {
      done();
      return;
    }
    const fromQuery = config.keyInQuery !== false;
    const value = readKeyValue(request, fromQuery);
    if (value === undefined) {
      const inQuery = !fromQuery && (request.query as Record<string, unknown> | undefined)?.['api-key'] !== undefined;
      throw new AppError('API_KEY_REQUIRED', inQuery ? KEY_NOT_IN_QUERY : {});
    }
    const now = Date.now();
    const found = lookup(value, request, now);
    if (!(found instanceof Promise)) {
      admit(request, reply, found, scope, now);
      done();
      return;
    }
    found.then(
      (key) => {
        try {
          admit(request, reply, key, scope, now);
        } catch (err) {
          done(err as Error);
          return;
        }
        done();
      },
      (err: Error) => done(err),
    );
  };
}
