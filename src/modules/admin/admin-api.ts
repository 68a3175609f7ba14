import cookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { AdminDocument, buildAdminDocument, collectRoutes } from '../../http/admin-openapi.js';
import { VERSION } from '../../version.js';
import { campaignAdminRoutes } from '../campaigns/campaigns.admin.routes.js';
import { segmentRoutes } from '../segments/segments.routes.js';
import { authRoutes } from './auth/auth.routes.js';
import { createSessionHook } from './auth/session-hook.js';
import { contactRoutes } from './contacts/contacts.routes.js';
import { messageFrameRoutes } from './message-frame.js';
import { outboxRoutes } from './outbox.js';
import { settingsRoutes } from './settings.routes.js';

/**
 * The JSON API behind the admin panel (docs/admin-api.md), registered with prefix /admin/api.
 * Encapsulated: the cookie parser and the session hook apply to these routes only, never to
 * the public API. Every route is hidden from the public OpenAPI document; the admin API has
 * its own, built from the same route schemas: GET /admin/api/openapi.json.
 */
export const adminApi = (deps: AppDeps): FastifyPluginAsync => async (app) => {
  // Registered first: its onRequest hook parses the cookie before the session hook reads it.
  await app.register(cookie);
  app.addHook('onRequest', createSessionHook(deps.db, deps.config));
  const routes = collectRoutes(app);
  // Public like /openapi.json: it describes shapes, never data (decisions.md, Admin API document).
  let document: Record<string, unknown> | undefined;
  app.get('/openapi.json', { config: { noSession: true }, schema: { hide: true, response: { 200: AdminDocument } } }, async () => {
    document ??= buildAdminDocument(routes, { version: VERSION, prefix: app.prefix });
    return document;
  });
  for (const plugin of [authRoutes, settingsRoutes, campaignAdminRoutes, contactRoutes, segmentRoutes, outboxRoutes, messageFrameRoutes]) {
    await app.register(plugin(deps));
  }
};
