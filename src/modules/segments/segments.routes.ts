import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppDeps } from '../../deps.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../../http/paging.js';
import { QueryNumber, wholeQuery } from '../../http/query.js';
import { PreviewBody, SegmentBody } from './segments.schemas.js';
import { createSegment, deleteSegment, listSegments, previewSegment, replaceSegment, segmentContacts } from './segments.service.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });
const PageQuery = Type.Object(
  { limit: Type.Optional(QueryNumber), cursor: Type.Optional(Type.String({ maxLength: 1024 })) },
  { additionalProperties: false },
);

/** Segments of the admin API (under its session hook). */
export const segmentRoutes = (deps: AppDeps): FastifyPluginAsyncTypebox => async (app) => {
  const { db } = deps;
  app.get('/segments', { schema: { hide: true } }, async (request) => listSegments(db, request.admin.accountId));
  app.post('/segments', { schema: { hide: true, body: SegmentBody } }, async (request) => createSegment(db, request.admin.accountId, request.body));
  app.put('/segments/:id', { schema: { hide: true, params: IdParams, body: SegmentBody } }, async (request) =>
    replaceSegment(db, request.admin.accountId, request.params.id, request.body),
  );
  app.delete('/segments/:id', { schema: { hide: true, params: IdParams } }, async (request, reply) => {
    await deleteSegment(db, request.admin.accountId, request.params.id);
    return reply.code(204).send();
  });
  app.post('/segments/preview', { schema: { hide: true, body: PreviewBody } }, async (request) => previewSegment(db, request.admin.accountId, request.body.criteria));
  app.get('/segments/:id/contacts', { schema: { hide: true, params: IdParams, querystring: PageQuery } }, async (request) =>
    segmentContacts(db, request.admin.accountId, request.params.id, {
      limit: wholeQuery(request.query.limit, 'limit', 1, MAX_PAGE, DEFAULT_PAGE),
      cursor: request.query.cursor,
    }),
  );
};
