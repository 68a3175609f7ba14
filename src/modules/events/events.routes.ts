import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { errorResponses, IdempotencyHeaders } from '../../http/openapi.js';
import { EventBody, EventResponse } from './events.schemas.js';
import { recordEvent } from './events.service.js';

export const eventRoutes =
  ({ db }: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/api/events',
      {
        config: { scope: 'events:write', idempotent: true },
        schema: {
          tags: ['events'],
          summary: "Log an event in a contact's history",
          description: 'The contact must exist; it is found by `leadId`, or else by a linked `tracker` visitor id.',
          headers: IdempotencyHeaders,
          body: EventBody,
          response: { 200: EventResponse, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
        },
      },
      async (request) => recordEvent(db, request.apiKey.accountId, request.body, Date.now(), request.idempotency),
    );
  };
