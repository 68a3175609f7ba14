import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { BatchResponse, batchBody, MAX_BATCH_BODY_BYTES, MAX_BATCH_ITEMS, runBatch } from '../../http/batch.js';
import { errorResponses, IdempotencyHeaders } from '../../http/openapi.js';
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
          headers: IdempotencyHeaders,
          body: batchBody('A `POST /api/events` body.'),
          response: { 200: BatchResponse, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
        },
      },
      async (request) =>
        runBatch(request, EventBody, request.body.items, (items: EventInput[], answer) =>
          recordEvents(db, request.apiKey.accountId, items, request.idempotency && { request: request.idempotency, answer }),
        ),
    );
  };
