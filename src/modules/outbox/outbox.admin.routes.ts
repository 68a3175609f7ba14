import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { OutboxIdParams, OutboxListQuery, OutboxMessage, OutboxPage } from '../../contract/admin/outbox.js';
import type { AppDeps } from '../../deps.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../../http/paging.js';
import { wholeQuery } from '../../http/query.js';
import { getOutboxMessage, pageOutbox } from './outbox.service.js';

/** The built-in outbox of the admin API (under its session hook; docs/admin-api.md, Outbox). */
export const outboxAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get('/outbox', { schema: { hide: true, querystring: OutboxListQuery, response: { 200: OutboxPage } } }, async (request) =>
      pageOutbox(deps.db, request.admin.accountId, {
        campaignId: request.query.campaignId || undefined,
        limit: wholeQuery(request.query.limit, 'limit', 1, MAX_PAGE, DEFAULT_PAGE),
        cursor: request.query.cursor,
      }),
    );
    app.get('/outbox/:id', { schema: { hide: true, params: OutboxIdParams, response: { 200: OutboxMessage } } }, async (request) =>
      getOutboxMessage(deps.db, deps.config, request.admin.accountId, request.params.id),
    );
  };
