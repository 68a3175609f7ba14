import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { BatchResponse, batchBody, MAX_BATCH_BODY_BYTES, MAX_BATCH_ITEMS, runBatch } from '../../http/batch.js';
import { errorResponses } from '../../http/openapi.js';
import { LeadBody, type LeadInput, LeadResponse } from './contacts.schemas.js';
import { writeContact, writeContacts } from './contacts.service.js';

export const contactRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/api/leads',
      {
        config: { scope: 'leads:write' },
        schema: {
          tags: ['contacts'],
          summary: 'Create or update a contact',
          description:
            'Looks the contact up by `id`, then `email`, then `phone`; updates it when found, else creates it (then `name` and an ' +
            'email or phone are required). Emails, phones and tags are added; sent fields replace stored ones; KPIs add up. ' +
            'Unknown custom fields or KPIs and wrong value formats are skipped and listed in `warnings`. 409 when a sent ' +
            'identifier belongs to another contact. Scope `leads:write`.',
          body: LeadBody,
          response: { 200: LeadResponse, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429) },
        },
      },
      async (request) => writeContact(deps.db, request.apiKey.accountId, request.body),
    );

    app.post(
      '/api/leads/batch',
      {
        bodyLimit: MAX_BATCH_BODY_BYTES,
        config: { scope: 'leads:write', batch: true },
        schema: {
          tags: ['contacts'],
          summary: 'Create or update many contacts',
          description:
            `Up to ${MAX_BATCH_ITEMS} \`POST /api/leads\` bodies in \`items\`, applied in order, each exactly as that call would ` +
            '(same checks, same warnings). Answers 200 with one result per item: `status` and the body that call would have ' +
            'answered (its 200 body, or its error body). A failed item changes nothing and never fails the others. ' +
            'Body up to 10 MiB; counts as one request against the rate limit. Scope `leads:write`.',
          body: batchBody('A `POST /api/leads` body.'),
          response: { 200: BatchResponse, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
        },
      },
      async (request) =>
        runBatch(request, LeadBody, request.body.items, (items: LeadInput[]) => writeContacts(deps.db, request.apiKey.accountId, items)),
    );
  };
