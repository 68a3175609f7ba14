import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/connect.js';
import { AppError } from '../errors.js';
import { checkKeyState, findKeyByValue, type ApiKey } from '../modules/keys/keys.service.js';
import type { Scope } from '../modules/keys/scopes.js';
import { RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key of a public API call. */
    apiKey: ApiKey;
  }
  interface FastifyContextConfig {
    /** The scope a public API route needs; routes without it are not key-protected. */
    scope?: Scope;
  }
}

/**
 * Key rows are cached for a short while so a hot key costs no query per request; the TTL
 * keeps changes made by the CLI or the panel (key switched off, scopes edited) visible
 * within 1 second, also to other processes.
 */
const CACHE_TTL_MS = 500;

export function readKeyValue(request: FastifyRequest): string | undefined {
  const header = request.headers['x-service-api-key'];
  if (typeof header === 'string' && header !== '') return header;
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  const query = (request.query as Record<string, unknown> | undefined)?.['api-key'];
  return typeof query === 'string' && query !== '' ? query : undefined;
}

export function createAuthHook(db: Db, limits: { perSecond: number; burst: number }) {
  const cache = new Map<string, { key: ApiKey | undefined; at: number }>();
  const limiter = new RateLimiter(limits.perSecond, limits.burst);

  async function lookup(value: string, now: number): Promise<ApiKey | undefined> {
    const hit = cache.get(value);
    if (hit && now - hit.at < CACHE_TTL_MS) return hit.key;
    const key = await findKeyByValue(db, value);
    // Only known keys are cached: random guesses must not grow the map.
    if (key) cache.set(value, { key, at: now });
    else cache.delete(value);
    if (cache.size > 10_000) cache.clear();
    return key;
  }

  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    const value = readKeyValue(request);
    if (value === undefined) throw new AppError('API_KEY_REQUIRED');
    const now = Date.now();
    const key = checkKeyState(await lookup(value, now), scope, now);
    const wait = limiter.take(key.id, now);
    if (wait > 0) throw new AppError('RATE_LIMITED', { headers: { 'retry-after': String(wait) } });
    request.apiKey = key;
  };
}
