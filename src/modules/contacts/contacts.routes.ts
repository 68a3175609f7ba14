import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { errorResponses, IdempotencyHeaders } from '../../http/openapi.js';
import { LeadBody, LeadResponse } from './contacts.schemas.js';
import { writeContact } from './contacts.service.js';

export const contactRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
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
  };
