import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { ContactCount, ContactFilterQuery, ContactImportBody, ContactImportResults } from '../../contract/admin/contact-csv.js';
import { SegmentIdParams } from '../../contract/admin/segments.js';
import type { AppDeps } from '../../deps.js';
import { MAX_BATCH_BODY_BYTES, runBatch } from '../../http/batch.js';
import { boolQuery } from '../../http/query.js';
import { type ContactSearch, countContacts } from '../contacts/contacts.admin.service.js';
import { LeadBody, type LeadInput } from '../contacts/contacts.schemas.js';
import { contactsCsv } from './contact-csv.js';
import { exportedContacts, exportedSegmentContacts } from './contact-export.service.js';
import { importContacts } from './contact-import.service.js';

/** The list's filters from the query string, read as `GET /contacts` reads them. */
const filters = (query: ContactFilterQuery): Omit<ContactSearch, 'limit' | 'cursor'> => ({
  q: query.q,
  tag: query.tag === '' ? undefined : query.tag,
  archived: boolQuery(query.archived, 'archived'),
  optedOut: boolQuery(query.optedOut, 'optedOut'),
});

/** A CSV file download: the browser saves it under `name`, dated, rather than showing it. */
function sendCsv(reply: FastifyReply, name: string, csv: NodeJS.ReadableStream) {
  const day = new Date().toISOString().slice(0, 10);
  const safe = name.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'contacts';
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${safe}-${day}.csv"`)
    .header('cache-control', 'no-store')
    .send(csv);
}

/** A CSV answer for the admin document (admin-openapi.ts reads `produces`). */
const CSV_SCHEMA = { hide: true, produces: ['text/csv'] } as const;

/** Contacts at scale (docs/admin-api.md, Contacts): count, CSV export of a search or a segment, CSV import. */
export const contactCsvAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db } = deps;

    app.get(
      '/contacts/count',
      { schema: { hide: true, querystring: ContactFilterQuery, response: { 200: ContactCount } } },
      async (request) => countContacts(db, request.admin.accountId, filters(request.query)),
    );

    app.get('/contacts/export', { schema: { ...CSV_SCHEMA, querystring: ContactFilterQuery } }, async (request, reply) =>
      sendCsv(reply, 'contacts', contactsCsv(exportedContacts(db, request.admin.accountId, filters(request.query)))),
    );

    app.get('/segments/:id/export', { schema: { ...CSV_SCHEMA, params: SegmentIdParams } }, async (request, reply) => {
      const { name, contacts } = await exportedSegmentContacts(db, request.admin.accountId, request.params.id);
      return sendCsv(reply, `segment-${name}`, contactsCsv(contacts));
    });

    app.post(
      '/contacts/import',
      {
        bodyLimit: MAX_BATCH_BODY_BYTES,
        config: { batch: true },
        schema: { hide: true, body: ContactImportBody, response: { 200: ContactImportResults } },
      },
      async (request) => {
        const accountId = request.admin.accountId;
        const dryRun = request.body.dryRun === true;
        return runBatch(request, LeadBody, request.body.items, (items: LeadInput[]) =>
          importContacts(db, accountId, items, dryRun, (error) =>
            request.log.warn({ err: error }, 'ANALYZE after a contact import failed'),
          ),
        );
      },
    );
  };
