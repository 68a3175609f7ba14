import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../deps.js';
import { documented, JSON_BODY_ERRORS, KEY_ERRORS } from '../../http/operation-docs.js';
import { LeadBody, LeadResponse } from './contacts.schemas.js';
import { writeContact } from './contacts.service.js';

export const contactRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/api/leads',
      {
        config: { scope: 'leads:write' },
        schema: {
          operationId: 'upsertLead',
          tags: ['contacts'],
          summary: 'Create or update a contact',
          description:
            'Looks the contact up by `id`, then `email`, then `phone`; updates it when found, else creates it (then `name` and an ' +
            'email or phone are required). Emails, phones and tags are added; sent fields replace stored ones; KPIs add up. ' +
            'Unknown custom fields or KPIs and wrong value formats are skipped and listed in `warnings`. 409 when a sent ' +
            'identifier belongs to another contact. Scope `leads:write`.',
          body: LeadBody,
          ...documented({
            success: {
              schema: LeadResponse,
              description: 'The contact was written: its id, whether it was created, what was applied in stored form, and warnings.',
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
            ],
          }),
        },
      },
      async (request) => writeContact(deps.db, request.apiKey.accountId, request.body),
    );
  };
