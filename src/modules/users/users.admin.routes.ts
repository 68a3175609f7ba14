import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { UserBody, UserCreated, UserList } from '../../contract/admin/users.js';
import { IdParams, NoContent } from '../../contract/common.js';
import type { AppDeps } from '../../deps.js';
import { createUser, deleteUser, listUsers } from './users.service.js';

/** The account's panel users in the admin API (administrators only). */
export const userAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db } = deps;
    const admin = { adminOnly: true };

    app.get('/users', { config: admin, schema: { hide: true, response: { 200: UserList } } }, async (request) =>
      listUsers(db, request.admin.accountId),
    );

    app.post('/users', { config: admin, schema: { hide: true, body: UserBody, response: { 200: UserCreated } } }, async (request) =>
      createUser(db, request.admin.accountId, request.body),
    );

    app.delete(
      '/users/:id',
      { config: admin, schema: { hide: true, params: IdParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await deleteUser(db, request.admin.accountId, request.params.id, request.admin.userId);
        return reply.code(204).send(null);
      },
    );
  };
