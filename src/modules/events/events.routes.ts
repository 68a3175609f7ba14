import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { BATCH_ERRORS, BatchResponse, batchBody, MAX_BATCH_BODY_BYTES, MAX_BATCH_ITEMS, runBatch } from '../../http/batch.js';
import { IdempotencyHeaders } from '../../http/openapi.js';
import { documented, IDEMPOTENCY_ERRORS, JSON_BODY_ERRORS, KEY_ERRORS } from '../../http/operation-docs.js';
import { EventBody, type EventInput, EventResponse } from './events.schemas.js';
import { recordEvent, recordEvents } from './events.service.js';

export const eventRoutes =
  ({ db }: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/api/events',
      {
        config: { scope: 'events:write', idempotent: true },
        schema: {
          operationId: 'logEvent',
          tags: ['events'],
          summary: "Log an event in a contact's history",
          description: 'The contact must exist; it is found by `leadId`, or else by a linked `tracker` visitor id. Scope `events:write`.',
          headers: IdempotencyHeaders,
          body: EventBody,
          ...documented({
            success: {
              schema: EventResponse,
              description: 'The event was logged: its id, the contact it belongs to, its type and time.',
              headers: ['Idempotent-Replayed'],
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
              ...IDEMPOTENCY_ERRORS,
            ],
          }),
        },
      },
      async (request) => recordEvent(db, request.apiKey.accountId, request.body, Date.now(), request.idempotency),
    );

    app.post(
      '/api/events/batch',
      {
        bodyLimit: MAX_BATCH_BODY_BYTES,
        config: { scope: 'events:write', batch: true, idempotent: true },
        schema: {
          tags: ['events'],
          summary: 'Log many events',
          description:
            `Up to ${MAX_BATCH_ITEMS} \`POST /api/events\` bodies in \`items\`, applied in order, each exactly as that call would. ` +
            'Answers 200 with one result per item: `status` and the body that call would have answered (its 200 body, or its ' +
            'error body, e.g. 404 Lead not found). A failed item changes nothing and never fails the others. Body up to 10 MiB; ' +
            'counts as one request against the rate limit. Scope `events:write`.',
          operationId: 'logEventsBatch',
          headers: IdempotencyHeaders,
          body: batchBody('A `POST /api/events` body.'),
          ...documented({
            success: {
              schema: BatchResponse,
              description: 'One result per item, in order: the status and body its single call would have answered.',
              headers: ['Idempotent-Replayed'],
              examples: {
                mixed: {
                  summary: 'An event logged, and one for an unknown contact',
                  value: {
                    results: [
                      {
                        status: 200,
                        body: {
                          id: 'ev_01jdb3w2c4d6f8g0h2j4k6m8n0',
                          leadId: 'ld_01jdb3v7k2m9q4x8r5t6w1y3z0',
                          type: 'purchase',
                          createdAt: '2026-11-22T10:15:30.123Z',
                        },
                      },
                      { status: 404, body: { statusCode: 404, error: 'Not Found', code: 'LEAD_NOT_FOUND', message: 'Lead not found' } },
                    ],
                  },
                },
              },
            },
            errors: BATCH_ERRORS,
          }),
        },
      },
      async (request) =>
        runBatch(request, EventBody, request.body.items, (items: EventInput[], answer) =>
          recordEvents(db, request.apiKey.accountId, items, request.idempotency && { request: request.idempotency, answer }),
        ),
    );
  };
