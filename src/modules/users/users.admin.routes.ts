import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { OwnPasswordBody, UserBody, UserCreated, UserList, UserPasswordBody, UserRoleBody } from '../../contract/admin/users.js';
import { IdParams, NoContent } from '../../contract/common.js';
import type { AppDeps } from '../../deps.js';
import { changeOwnPassword, changeRole, resetPassword } from './user-changes.service.js';
import { createUser, deleteUser, listUsers } from './users.service.js';

/** The account's panel users in the admin API (administrators only), and one's own password (everyone). */
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

    app.patch(
      '/users/:id',
      { config: admin, schema: { hide: true, params: IdParams, body: UserRoleBody, response: { 204: NoContent } } },
      async (request, reply) => {
        const { accountId, userId } = request.admin;
        await changeRole(db, accountId, request.params.id, request.body.role, userId);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/users/:id/password',
      { config: admin, schema: { hide: true, params: IdParams, body: UserPasswordBody, response: { 204: NoContent } } },
      async (request, reply) => {
        const { accountId, userId } = request.admin;
        await resetPassword(db, accountId, request.params.id, request.body.password, userId);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/profile/password',
      { schema: { hide: true, body: OwnPasswordBody, response: { 204: NoContent } } },
      async (request, reply) => {
        const { accountId, userId, id: sessionId } = request.admin;
        await changeOwnPassword(db, { accountId, userId, sessionId }, request.body);
        return reply.code(204).send(null);
      },
    );
  };
