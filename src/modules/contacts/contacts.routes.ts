import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { BatchResponse, batchBody, MAX_BATCH_BODY_BYTES, MAX_BATCH_ITEMS, runBatch } from '../../http/batch.js';
import { errorResponses, IdempotencyHeaders } from '../../http/openapi.js';
import { ContactResponse, LeadBody, LeadIdParams, type LeadInput, LeadLookupQuery, LeadResponse } from './contacts.schemas.js';
import { readContactByAddress, readContactById, writeContact, writeContacts } from './contacts.service.js';

/** The read routes (decisions.md, Public API): scope leads:read, the key in a header only, never in the address. */
const READ = { scope: 'leads:read', keyInQuery: false } as const;
/** OpenAPI: the header schemes of src/http/openapi.ts, without the query one. */
const READ_SECURITY: Record<string, string[]>[] = [{ apiKeyHeader: [] }, { bearer: [] }];
const READ_NOTE =
  ' Scope `leads:read`. The key goes in the `x-service-api-key` header (or `Authorization: Bearer`); an `api-key` query ' +
  "parameter is not read here (401). Another account's contact answers 404 like an unknown one.";

export const contactRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/api/leads/:id',
      {
        config: READ,
        schema: {
          tags: ['contacts'],
          summary: 'Read a contact by id',
          description: `The contact as \`herald contact show\` prints it; archived contacts too.${READ_NOTE}`,
          security: READ_SECURITY,
          params: LeadIdParams,
          response: { 200: ContactResponse, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => readContactById(deps.db, request.apiKey.accountId, request.params.id),
    );

    app.get(
      '/api/leads',
      {
        config: READ,
        schema: {
          tags: ['contacts'],
          summary: 'Find a contact by email or phone',
          description:
            'Exactly one of `email` and `phone`, read like on writes (email trimmed and lowercased, phone to E.164); ' +
            `404 \`Lead not found\` when no contact of the account holds it.${READ_NOTE}`,
          security: READ_SECURITY,
          querystring: LeadLookupQuery,
          response: { 200: ContactResponse, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => readContactByAddress(deps.db, request.apiKey.accountId, request.query),
    );

    app.post(
      '/api/leads',
      {
        config: { scope: 'leads:write', idempotent: true },
        schema: {
          tags: ['contacts'],
          summary: 'Create or update a contact',
          description:
            'Looks the contact up by `id`, then `email`, then `phone`; updates it when found, else creates it (then `name` and an ' +
            'email or phone are required). Emails, phones and tags are added; sent fields replace stored ones; KPIs add up. ' +
            'Unknown custom fields or KPIs and wrong value formats are skipped and listed in `warnings`. 409 when a sent ' +
            'identifier belongs to another contact. Scope `leads:write`.',
          headers: IdempotencyHeaders,
          body: LeadBody,
          response: { 200: LeadResponse, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
        },
      },
      async (request) => writeContact(deps.db, request.apiKey.accountId, request.body, request.idempotency),
    );

    app.post(
      '/api/leads/batch',
      {
        bodyLimit: MAX_BATCH_BODY_BYTES,
        config: { scope: 'leads:write', batch: true, idempotent: true },
        schema: {
          tags: ['contacts'],
          summary: 'Create or update many contacts',
          description:
            `Up to ${MAX_BATCH_ITEMS} \`POST /api/leads\` bodies in \`items\`, applied in order, each exactly as that call would ` +
            '(same checks, same warnings). Answers 200 with one result per item: `status` and the body that call would have ' +
            'answered (its 200 body, or its error body). A failed item changes nothing and never fails the others. ' +
            'Body up to 10 MiB; counts as one request against the rate limit. Scope `leads:write`.',
          headers: IdempotencyHeaders,
          body: batchBody('A `POST /api/leads` body.'),
          response: { 200: BatchResponse, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
        },
      },
      async (request) =>
        runBatch(request, LeadBody, request.body.items, (items: LeadInput[], answer) =>
          writeContacts(deps.db, request.apiKey.accountId, items, request.idempotency && { request: request.idempotency, answer }),
        ),
    );
  };
