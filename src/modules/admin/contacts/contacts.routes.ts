import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppDeps } from '../../../deps.js';
import { MAX_PAGE, DEFAULT_PAGE, parseInstant } from '../../../http/paging.js';
import { boolQuery, QueryNumber, wholeQuery } from '../../../http/query.js';
import { searchContacts } from './contact-search.js';
import { addNote, contactActivity, contactProfile, updateContactFlags } from './contacts.service.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });
const ListQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 255 })),
    tag: Type.Optional(Type.String({ maxLength: 255 })),
    archived: Type.Optional(Type.String()),
    optedOut: Type.Optional(Type.String()),
    limit: Type.Optional(QueryNumber),
    cursor: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);
const ActivityQuery = Type.Object({ before: Type.Optional(Type.String({ maxLength: 64 })), limit: Type.Optional(QueryNumber) }, { additionalProperties: false });
const NoteBody = Type.Object({ text: Type.String() }, { additionalProperties: false });
const FlagsBody = Type.Object({ archived: Type.Optional(Type.Boolean()), optedOut: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

export const contactRoutes = (deps: AppDeps): FastifyPluginAsyncTypebox => async (app) => {
  const { db } = deps;

  app.get('/contacts', { schema: { hide: true, querystring: ListQuery } }, async (request) => {
    const { q, tag, cursor } = request.query;
    return searchContacts(db, request.admin.accountId, {
      q,
      tag: tag === '' ? undefined : tag,
      archived: boolQuery(request.query.archived, 'archived'),
      optedOut: boolQuery(request.query.optedOut, 'optedOut'),
      limit: wholeQuery(request.query.limit, 'limit', 1, MAX_PAGE, DEFAULT_PAGE),
      cursor,
    });
  });
  app.get('/contacts/:id', { schema: { hide: true, params: IdParams } }, async (request) => contactProfile(db, request.admin.accountId, request.params.id));
  app.patch('/contacts/:id', { schema: { hide: true, params: IdParams, body: FlagsBody } }, async (request) =>
    updateContactFlags(db, request.admin.accountId, request.params.id, request.body),
  );
  app.get('/contacts/:id/activity', { schema: { hide: true, params: IdParams, querystring: ActivityQuery } }, async (request) => {
    const { before, limit } = request.query;
    return contactActivity(db, request.admin.accountId, request.params.id, {
      before: before === undefined ? undefined : parseInstant(before, '/before'),
      limit: wholeQuery(limit, 'limit', 1, 500, 100),
    });
  });
  app.post('/contacts/:id/notes', { schema: { hide: true, params: IdParams, body: NoteBody } }, async (request, reply) => {
    const note = await addNote(db, request.admin.accountId, request.params.id, request.body.text, request.admin.email);
    return reply.code(201).send(note);
  });
};
