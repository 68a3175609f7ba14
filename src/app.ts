import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/connect.js';
import type { AppDeps } from './deps.js';
import { AdminDocument, AdminDocumentSource } from './http/admin-openapi.js';
import { createAuthHook } from './http/auth.js';
import { drainUnreadBodies } from './http/drain.js';
import { clientErrorHandler, errorMessageKeyword, frameworkErrors, installErrorHandling } from './http/error-handler.js';
import { createIdempotencyHook } from './http/idempotency.js';
import { createLogger } from './http/logger.js';
import { registerOpenApi } from './http/openapi.js';
import { documentedAsKeyword } from './http/operation-docs.js';
import { requestHeaders } from './http/security-headers.js';
import { refuseUnstorableStrings } from './http/string-guard.js';
import { maxDepthKeyword } from './json-limits.js';
import { adminApi } from './modules/admin/admin-api.js';
import { registerAdminPanel } from './modules/admin/admin-static.js';
import { contactRoutes } from './modules/contacts/contacts.routes.js';
import { eventRoutes } from './modules/events/events.routes.js';
import { sendRoutes } from './modules/sends/sends.routes.js';
import { trackingRoutes } from './modules/tracking/tracking.routes.js';
import { MAX_TOKEN_LENGTH } from './modules/tracking/tracking-token.js';
import { unsubscribeRoutes } from './modules/unsubscribe/unsubscribe.routes.js';
import { whatsappRoutes } from './modules/whatsapp/whatsapp.routes.js';
import type { LoopHealth } from './ops/health.js';
import { HeraldMetrics } from './ops/metrics.js';
import { installHttpMetrics, registerOpsRoutes } from './ops/ops.routes.js';
import { VERSION } from './version.js';

export type { AppDeps } from './deps.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Builds the whole HTTP application; never listens (tests call app.inject()). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = createFastify(deps.logger ?? createLogger(deps.config.logLevel), deps.config.trustProxy);
  const metrics = deps.metrics ?? new HeraldMetrics(deps.db, { role: 'api', version: VERSION });
  installHttpMetrics(app, metrics);
  // Only JSON bodies are accepted: other content types answer 415.
  app.removeContentTypeParser('text/plain');
  // Every answer's x-request-id, and the panel's security headers under /admin.
  app.addHook('onRequest', requestHeaders);
  installErrorHandling(app);
  drainUnreadBodies(app);
  // A request with no body at all is judged as an empty object, so the details name each
  // required member instead of the whole body (decisions.md: never the empty root).
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
    done();
  });
  // The public and admin APIs take no NUL character or lone surrogate anywhere (after the key, body and shape checks);
  // a batch checks each of its items instead, so one such item fails alone (http/batch.ts).
  app.addHook('preHandler', (request, _reply, done) => {
    const route = request.routeOptions;
    const url = route.url ?? '';
    if (url.startsWith('/api/') || url.startsWith('/admin/api/')) refuseUnstorableStrings(request, !route.config.batch);
    done();
  });
  await registerOpenApi(app, { version: VERSION, publicUrl: deps.config.publicUrl });
  // Probes and metrics: no key, no rate limit. /metrics moves to METRICS_PORT when that is set.
  registerOpsRoutes(app, {
    db: deps.db,
    metrics,
    dispatcher: deps.dispatcher,
    metricsToken: deps.config.metricsToken,
    serveMetrics: deps.config.metricsPort === undefined,
  });

  // Key check (and rate limit) runs before the body is read, on every route that names a scope.
  app.addHook('onRequest', createAuthHook(deps.db, { perSecond: deps.config.rateLimitPerSecond, burst: deps.config.rateLimitBurst }));
  // Idempotency-Key on the routes flagged `idempotent` (after the body and NUL checks, as a preHandler).
  app.addHook('preHandler', createIdempotencyHook(deps.db));

  await app.register(contactRoutes(deps));
  await app.register(eventRoutes(deps));
  await app.register(unsubscribeRoutes(deps));
  await app.register(trackingRoutes(deps));
  await app.register(whatsappRoutes(deps));
  await app.register(sendRoutes(deps));
  // The panel's JSON API: session cookie, CSRF and roles instead of API keys (its own onRequest hook).
  const adminDocs = new AdminDocumentSource({ version: VERSION, publicUrl: deps.config.publicUrl });
  await app.register(adminApi(deps, adminDocs), { prefix: '/admin/api' });
  // The admin API's own OpenAPI document, beside the public one (the panel's static files stay under /admin/).
  app.get('/admin/openapi.json', { schema: { hide: true, response: { 200: AdminDocument } } }, async () => adminDocs.document());
  await registerAdminPanel(app);
  return app;
}

/**
 * The probes and /metrics alone, for METRICS_PORT: a worker's only HTTP server, or the API
 * process's second one (so /metrics need not be reachable on the public port).
 */
export async function buildOpsApp(deps: {
  config: Config;
  db: Db;
  logger: Logger;
  metrics: HeraldMetrics;
  dispatcher?: LoopHealth;
}): Promise<FastifyInstance> {
  const app = createFastify(deps.logger);
  installHttpMetrics(app, deps.metrics);
  installErrorHandling(app);
  registerOpsRoutes(app, {
    db: deps.db,
    metrics: deps.metrics,
    dispatcher: deps.dispatcher,
    metricsToken: deps.config.metricsToken,
    serveMetrics: true,
  });
  return app;
}

function createFastify(logger: Logger, trustProxy: readonly string[] = []) {
  return Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // request.ip (throttles, logs) is the socket's peer unless that peer is a listed proxy.
    trustProxy: trustProxy.length > 0 ? [...trustProxy] : false,
    genReqId: () => randomUUID(),
    // Ids are always ours: a client-sent x-request-id is not trusted into the logs.
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    frameworkErrors,
    clientErrorHandler,
    bodyLimit: MAX_BODY_BYTES,
    // Click tokens carry their target address: path parameters must fit the longest one.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_TOKEN_LENGTH },
    ajv: {
      // Members have exactly the JSON types of the spec: nothing is coerced or dropped silently.
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: true, verbose: true },
      // Free-form members carry `maxDepth`: a value nested too deeply is refused before anything recurses into it.
      // Choice fields may carry their own message (`x-error-message`; `verbose` hands the handler each error's schema).
      plugins: [maxDepthKeyword, errorMessageKeyword, documentedAsKeyword],
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
}
