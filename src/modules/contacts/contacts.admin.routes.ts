import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ActivityPage,
  ActivityQuery,
  AdminContactProfile,
  ContactEditBody,
  ContactErased,
  ContactFlagsBody,
  ContactIdParams,
  ContactListQuery,
  ContactPage,
  LiftSuppressionBody,
  Note,
  NoteBody,
} from '../../contract/admin/contacts.js';
import type { AppDeps } from '../../deps.js';
import { DEFAULT_PAGE, MAX_PAGE, parseInstant } from '../../http/paging.js';
import { boolQuery, wholeQuery } from '../../http/query.js';
import { editContact } from './contact-edit.js';
import { eraseContact } from './contact-erase.js';
import {
  addNote,
  contactActivity,
  contactProfile,
  liftContactSuppression,
  searchContacts,
  updateContactFlags,
} from './contacts.admin.service.js';

/** Contacts of the admin API (under its session hook; docs/admin-api.md, Contacts). */
export const contactAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db } = deps;

    app.get('/contacts', { schema: { hide: true, querystring: ContactListQuery, response: { 200: ContactPage } } }, async (request) => {
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
    app.get('/contacts/:id', { schema: { hide: true, params: ContactIdParams, response: { 200: AdminContactProfile } } }, async (request) =>
      contactProfile(db, request.admin.accountId, request.params.id),
    );
    app.patch(
      '/contacts/:id',
      { schema: { hide: true, params: ContactIdParams, body: ContactFlagsBody, response: { 200: AdminContactProfile } } },
      async (request) => updateContactFlags(db, request.admin.accountId, request.params.id, request.body),
    );
    app.post(
      '/contacts/:id/suppressions/lift',
      { schema: { hide: true, params: ContactIdParams, body: LiftSuppressionBody, response: { 200: AdminContactProfile } } },
      async (request) => liftContactSuppression(db, request.admin.accountId, request.params.id, request.body.address),
    );
    app.get(
      '/contacts/:id/activity',
      { schema: { hide: true, params: ContactIdParams, querystring: ActivityQuery, response: { 200: ActivityPage } } },
      async (request) => {
        const { before, limit } = request.query;
        return contactActivity(db, request.admin.accountId, request.params.id, {
          before: before === undefined ? undefined : parseInstant(before, '/before'),
          limit: wholeQuery(limit, 'limit', 1, 500, 100),
        });
      },
    );
    app.post(
      '/contacts/:id/notes',
      { schema: { hide: true, params: ContactIdParams, body: NoteBody, response: { 201: Note } } },
      async (request, reply) => {
        const note = await addNote(db, request.admin.accountId, request.params.id, request.body.text, request.admin.email);
        return reply.code(201).send(note);
      },
    );
    app.post(
      '/contacts/:id/edit',
      { schema: { hide: true, params: ContactIdParams, body: ContactEditBody, response: { 200: AdminContactProfile } } },
      async (request) => editContact(db, request.admin.accountId, request.params.id, request.body),
    );
    app.delete(
      '/contacts/:id',
      { config: { adminOnly: true }, schema: { hide: true, params: ContactIdParams, response: { 200: ContactErased } } },
      async (request) => eraseContact(db, request.admin.accountId, request.params.id),
    );
  };
