import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { documented, JSON_BODY_ERRORS, KEY_ERRORS } from '../../http/operation-docs.js';
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
          operationId: 'logEvent',
          tags: ['events'],
          summary: "Log an event in a contact's history",
          description: 'The contact must exist; it is found by `leadId`, or else by a linked `tracker` visitor id. Scope `events:write`.',
          body: EventBody,
          ...documented({
            success: {
              schema: EventResponse,
              description: 'The event was logged: its id, the contact it belongs to, its type and time.',
              examples: {
                logged: {
                  summary: 'A purchase logged for a contact',
                  value: {
                    id: 'ev_01jdb3w2c4d6f8g0h2j4k6m8n0',
                    leadId: 'ld_01jdb3v7k2m9q4x8r5t6w1y3z0',
                    type: 'purchase',
                    createdAt: '2026-11-22T10:15:30.123Z',
                  },
                },
              },
            },
            errors: [
              ...KEY_ERRORS,
              ...JSON_BODY_ERRORS,
              { code: 'VALIDATION', details: [{ path: '/type', message: 'is required' }] },
              'LEAD_OR_TRACKER_REQUIRED',
              'LEAD_NOT_FOUND',
            ],
          }),
        },
      },
      async (request) => recordEvent(db, request.apiKey.accountId, request.body),
    );
  };
