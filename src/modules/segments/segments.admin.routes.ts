import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  PreviewBody,
  Segment,
  SegmentBody,
  SegmentContacts,
  SegmentContactsQuery,
  SegmentDeleted,
  SegmentIdParams,
  SegmentList,
  SegmentPreview,
} from '../../contract/admin/segments.js';
import type { AppDeps } from '../../deps.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../../http/paging.js';
import { wholeQuery } from '../../http/query.js';
import { createSegment, deleteSegment, listSegments, previewSegment, replaceSegment, segmentContacts } from './segments.service.js';

/** Segments of the admin API (under its session hook; docs/admin-api.md, Segments). */
export const segmentAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db } = deps;
    app.get('/segments', { schema: { hide: true, response: { 200: SegmentList } } }, async (request) =>
      listSegments(db, request.admin.accountId),
    );
    app.post('/segments', { schema: { hide: true, body: SegmentBody, response: { 200: Segment } } }, async (request) =>
      createSegment(db, request.admin.accountId, request.body),
    );
    app.put(
      '/segments/:id',
      { schema: { hide: true, params: SegmentIdParams, body: SegmentBody, response: { 200: Segment } } },
      async (request) => replaceSegment(db, request.admin.accountId, request.params.id, request.body),
    );
    app.delete(
      '/segments/:id',
      { schema: { hide: true, params: SegmentIdParams, response: { 204: SegmentDeleted } } },
      async (request, reply) => {
        await deleteSegment(db, request.admin.accountId, request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post('/segments/preview', { schema: { hide: true, body: PreviewBody, response: { 200: SegmentPreview } } }, async (request) =>
      previewSegment(db, request.admin.accountId, request.body.criteria),
    );
    app.get(
      '/segments/:id/contacts',
      { schema: { hide: true, params: SegmentIdParams, querystring: SegmentContactsQuery, response: { 200: SegmentContacts } } },
      async (request) =>
        segmentContacts(db, request.admin.accountId, request.params.id, {
          limit: wholeQuery(request.query.limit, 'limit', 1, MAX_PAGE, DEFAULT_PAGE),
          cursor: request.query.cursor,
        }),
    );
  };
