import cookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { AdminDocument, type AdminDocumentSource } from '../../http/admin-openapi.js';
import { accountAdminRoutes } from '../accounts/accounts.admin.routes.js';
import { campaignAdminRoutes } from '../campaigns/campaigns.admin.routes.js';
import { contactCsvAdminRoutes } from '../contact-csv/contact-csv.admin.routes.js';
import { contactAdminRoutes } from '../contacts/contacts.admin.routes.js';
import { definitionAdminRoutes } from '../definitions/definitions.admin.routes.js';
import { keyAdminRoutes } from '../keys/keys.admin.routes.js';
import { messageFrameAdminRoutes } from '../outbox/message-frame.admin.routes.js';
import { outboxAdminRoutes } from '../outbox/outbox.admin.routes.js';
import { segmentAdminRoutes } from '../segments/segments.admin.routes.js';
import { userAdminRoutes } from '../users/users.admin.routes.js';
import { authRoutes } from './auth/auth.routes.js';
import { createSessionHook } from './auth/session-hook.js';

/**
 * The JSON API behind the admin panel (docs/admin-api.md), registered with prefix /admin/api.
 * Encapsulated: the cookie parser and the session hook apply to these routes only, never to
 * the public API. Every route is hidden from the public OpenAPI document; the admin API has
 * its own, built from the same route schemas: GET /admin/openapi.json (and /admin/api/openapi.json).
 */
export const adminApi =
  (deps: AppDeps, docs: AdminDocumentSource): FastifyPluginAsync =>
  async (app) => {
    // Registered first: its onRequest hook parses the cookie before the session hook reads it.
    await app.register(cookie);
    app.addHook('onRequest', createSessionHook(deps.db, deps.config));
    docs.collect(app);
    // Public like /openapi.json: it describes shapes, never data (decisions.md, Admin API document).
    // Also served at /admin/openapi.json (app.ts); this first address keeps working.
    app.get('/openapi.json', { config: { noSession: true }, schema: { hide: true, response: { 200: AdminDocument } } }, async () =>
      docs.document(),
    );
    for (const plugin of [
      authRoutes,
      accountAdminRoutes,
      userAdminRoutes,
      keyAdminRoutes,
      definitionAdminRoutes,
      campaignAdminRoutes,
      contactAdminRoutes,
      contactCsvAdminRoutes,
      segmentAdminRoutes,
      outboxAdminRoutes,
      messageFrameAdminRoutes,
    ]) {
      await app.register(plugin(deps));
    }
  };
