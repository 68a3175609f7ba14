import cookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { contactAdminRoutes } from '../contacts/contacts.admin.routes.js';
import { messageFrameAdminRoutes } from '../outbox/message-frame.admin.routes.js';
import { outboxAdminRoutes } from '../outbox/outbox.admin.routes.js';
import { segmentAdminRoutes } from '../segments/segments.admin.routes.js';
import { authRoutes } from './auth/auth.routes.js';
import { createSessionHook } from './auth/session-hook.js';
import { campaignRoutes } from './campaigns/campaigns.routes.js';
import { settingsRoutes } from './settings.routes.js';

/**
 * The JSON API behind the admin panel (docs/admin-api.md), registered with prefix /admin/api.
 * Encapsulated: the cookie parser and the session hook apply to these routes only, never to
 * the public API. Every route is hidden from the public OpenAPI document.
 */
export const adminApi = (deps: AppDeps): FastifyPluginAsync => async (app) => {
  // Registered first: its onRequest hook parses the cookie before the session hook reads it.
  await app.register(cookie);
  app.addHook('onRequest', createSessionHook(deps.db, deps.config));
  for (const routes of [authRoutes, settingsRoutes, campaignRoutes, contactAdminRoutes, segmentAdminRoutes, outboxAdminRoutes, messageFrameAdminRoutes]) {
    await app.register(routes(deps));
  }
};
