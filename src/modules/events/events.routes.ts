import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { errorResponses } from '../../http/openapi.js';
import { EventBody, EventResponse } from './events.schemas.js';
import { recordEvent } from './events.service.js';

export const eventRoutes =
  ({ db }: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/api/events',
      {
        config: { scope: 'events:write' },
        schema: {
          tags: ['events'],
          summary: "Log an event in a contact's history",
          description: 'The contact must exist; it is found by `leadId`, or else by a linked `tracker` visitor id.',
          body: EventBody,
          response: { 200: EventResponse, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
        },
      },
      async (request) => recordEvent(db, request.apiKey.accountId, request.body),
    );
  };
