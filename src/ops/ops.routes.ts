import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/connect.js';
import { AppError } from '../errors.js';
import { checkReadiness, type LoopHealth } from './health.js';
import type { HeraldMetrics } from './metrics.js';

export interface OpsDeps {
  db: Db;
  metrics: HeraldMetrics;
  /** The dispatcher of this process, when it runs one (its loop is part of readiness). */
  dispatcher?: LoopHealth;
  /** METRICS_TOKEN: when set, /metrics wants `Authorization: Bearer <token>`. */
  metricsToken?: string;
  /** False on the public port when METRICS_PORT moves /metrics to a port of its own. */
  serveMetrics: boolean;
}

/**
 * Probes and metrics. Never behind an API key or the rate limit (no `scope`), hidden from the
 * OpenAPI document, and logged at warn level only: a probe every few seconds would otherwise
 * write two info lines each time.
 */
export function registerOpsRoutes(app: FastifyInstance, deps: OpsDeps): void {
  const quiet = { logLevel: 'warn' as const, schema: { hide: true } };

  app.get('/healthz', quiet, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', quiet, async (_request, reply) => {
    const { ready, checks } = await checkReadiness(deps.db, deps.dispatcher);
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ok' : 'unavailable', checks });
  });

  if (!deps.serveMetrics) return;
  const allowed = deps.metricsToken === undefined ? undefined : digest(deps.metricsToken);
  app.get('/metrics', quiet, async (request: FastifyRequest, reply: FastifyReply) => {
    if (allowed && !bearerMatches(request.headers.authorization, allowed)) {
      throw new AppError('METRICS_TOKEN_REQUIRED', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
    }
    const { contentType, body } = await deps.metrics.render();
    return reply.header('cache-control', 'no-store').type(contentType).send(body);
  });
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Both sides hashed first: equal lengths for timingSafeEqual, and nothing learnt from timing. */
function bearerMatches(header: string | undefined, allowed: Buffer): boolean {
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return timingSafeEqual(digest(match?.[1] ?? ''), allowed) && match !== null;
}

/** Labels the request by its route pattern (never the URL: ids and tokens stay out of metrics). */
export function installHttpMetrics(app: FastifyInstance, metrics: HeraldMetrics): void {
  // A callback hook: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    const method = KNOWN_METHODS.has(request.method) ? request.method : 'OTHER';
    metrics.httpRequest(method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
