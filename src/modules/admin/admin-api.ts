import cookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { accountAdminRoutes } from '../accounts/accounts.admin.routes.js';
import { definitionAdminRoutes } from '../definitions/definitions.admin.routes.js';
import { keyAdminRoutes } from '../keys/keys.admin.routes.js';
import { segmentRoutes } from '../segments/segments.routes.js';
import { userAdminRoutes } from '../users/users.admin.routes.js';
import { authRoutes } from './auth/auth.routes.js';
import { createSessionHook } from './auth/session-hook.js';
import { campaignRoutes } from './campaigns/campaigns.routes.js';
import { contactRoutes } from './contacts/contacts.routes.js';
import { messageFrameRoutes } from './message-frame.js';
import { outboxRoutes } from './outbox.js';

/**
 * The JSON API behind the admin panel (docs/admin-api.md), registered with prefix /admin/api.
 * Encapsulated: the cookie parser and the session hook apply to these routes only, never to
 * the public API. Every route is hidden from the public OpenAPI document.
 */
export const adminApi = (deps: AppDeps): FastifyPluginAsync => async (app) => {
  // Registered first: its onRequest hook parses the cookie before the session hook reads it.
  await app.register(cookie);
  app.addHook('onRequest', createSessionHook(deps.db, deps.config));
  for (const routes of [authRoutes, accountAdminRoutes, userAdminRoutes, keyAdminRoutes, definitionAdminRoutes, campaignRoutes, contactRoutes, segmentRoutes, outboxRoutes, messageFrameRoutes]) {
    await app.register(routes(deps));
  }
};
