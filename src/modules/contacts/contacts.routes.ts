import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { BATCH_ERRORS, BatchResponse, batchBody, MAX_BATCH_BODY_BYTES, MAX_BATCH_ITEMS, runBatch } from '../../http/batch.js';
import { IdempotencyHeaders } from '../../http/openapi.js';
import { documented, IDEMPOTENCY_ERRORS, JSON_BODY_ERRORS, KEY_ERRORS } from '../../http/operation-docs.js';
import { ContactResponse, LeadBody, LeadIdParams, type LeadInput, LeadLookupQuery, LeadResponse } from './contacts.schemas.js';
import { readContactByAddress, readContactById, writeContact, writeContacts } from './contacts.service.js';

/** The read routes (decisions.md, Public API): scope leads:read, the key in a header only, never in the address. */
const READ = { scope: 'leads:read', keyInQuery: false } as const;
const READ_NOTE =
  ' Scope `leads:read`. The key goes in the `x-service-api-key` header (or `Authorization: Bearer`); an `api-key` query ' +
  "parameter is not read here (401). Another account's contact answers 404 like an unknown one.";

/** A contact as `herald contact show` prints it (the read routes' answer). */
const CONTACT_FOUND = {
  schema: ContactResponse,
  description: 'The contact, as `herald contact show` prints it.',
  examples: {
    found: {
      summary: 'A contact with tags, a field and a KPI',
      value: {
        id: 'ld_01jdb3v7k2m9q4x8r5t6w1y3z0',
        name: 'Ada Lovelace',
        emails: ['ada@example.com'],
        phones: ['+447700900123'],
        tags: ['newsletter'],
        fields: { City: 'London' },
        kpis: { purchases: 2 },
        metadata: {},
        notes: [],
        trackers: [],
        archived: false,
        optedOut: false,
        createdAt: '2026-11-20T09:30:00.000Z',
        updatedAt: '2026-11-24T16:02:11.000Z',
      },
    },
  },
};

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
          operationId: 'getLead',
          params: LeadIdParams,
          ...documented({ success: CONTACT_FOUND, errors: [...KEY_ERRORS, 'LEAD_NOT_FOUND'] }),
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
          operationId: 'findLead',
          querystring: LeadLookupQuery,
          ...documented({
            success: CONTACT_FOUND,
            errors: [
              ...KEY_ERRORS,
              { code: 'VALIDATION', details: [{ path: '/email', message: 'email or phone is required' }] },
              'LEAD_NOT_FOUND',
            ],
          }),
        },
      },
      async (request) => readContactByAddress(deps.db, request.apiKey.accountId, request.query),
    );

    app.post(
      '/api/leads',
      {
        config: { scope: 'leads:write', idempotent: true },
        schema: {
          operationId: 'upsertLead',
          tags: ['contacts'],
          summary: 'Create or update a contact',
          description:
            'Looks the contact up by `id`, then `email`, then `phone`; updates it when found, else creates it (then `name` and an ' +
            'email or phone are required). Emails, phones and tags are added; sent fields replace stored ones; KPIs add up. ' +
            'Unknown custom fields or KPIs and wrong value formats are skipped and listed in `warnings`. 409 when a sent ' +
            'identifier belongs to another contact. Scope `leads:write`.',
          headers: IdempotencyHeaders,
          body: LeadBody,
          ...documented({
            success: {
              schema: LeadResponse,
              description: 'The contact was written: its id, whether it was created, what was applied in stored form, and warnings.',
              headers: ['Idempotent-Replayed'],
              examples: {
                created: {
                  summary: 'A new contact',
                  value: {
                    id: 'ld_01jdb3v7k2m9q4x8r5t6w1y3z0',
                    created: true,
                    email: 'ada@example.com',
                    name: 'Ada Lovelace',
                    tags: ['newsletter', 'trial'],
                    fields: [{ key: 'City', value: 'London' }],
                    kpis: { purchases: 1, revenue: 49.9 },
                    warnings: [],
                  },
                },
                withWarnings: {
                  summary: 'An update that skipped an unknown field and a KPI that is not a number',
                  value: {
                    id: 'ld_01jdb3v7k2m9q4x8r5t6w1y3z0',
                    created: false,
                    phone: '+447700900123',
                    fields: [{ key: 'Birthday', value: '1815-12-10' }],
                    warnings: [
                      { path: '/fields/1', message: "unknown custom field 'Colour'" },
                      { path: '/kpis/visits', message: "value of KPI 'visits' must be a number" },
                    ],
                  },
                },
              },
            },
            errors: [
              ...KEY_ERRORS,
              ...JSON_BODY_ERRORS,
              { code: 'VALIDATION', details: [{ path: '/name', message: 'is required to create a contact (at least 2 characters)' }] },
              'IDENTIFIER_CONFLICT',
              ...IDEMPOTENCY_ERRORS,
            ],
          }),
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
          operationId: 'upsertLeadsBatch',
          headers: IdempotencyHeaders,
          body: batchBody('A `POST /api/leads` body.'),
          ...documented({
            success: {
              schema: BatchResponse,
              description: 'One result per item, in order: the status and body its single call would have answered.',
              headers: ['Idempotent-Replayed'],
              examples: {
                mixed: {
                  summary: 'A contact created, and an item refused on its own',
                  value: {
                    results: [
                      {
                        status: 200,
                        body: {
                          id: 'ld_01jdb3v7k2m9q4x8r5t6w1y3z0',
                          created: true,
                          email: 'ada@example.com',
                          name: 'Ada Lovelace',
                          warnings: [],
                        },
                      },
                      {
                        status: 400,
                        body: {
                          statusCode: 400,
                          error: 'Bad Request',
                          code: 'VALIDATION_ERROR',
                          message: 'Validation Error',
                          details: [{ path: '/name', message: 'is required to create a contact (at least 2 characters)' }],
                        },
                      },
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
        runBatch(request, LeadBody, request.body.items, (items: LeadInput[], answer) =>
          writeContacts(deps.db, request.apiKey.accountId, items, request.idempotency && { request: request.idempotency, answer }),
        ),
    );
  };
