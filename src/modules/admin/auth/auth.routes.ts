import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LoginBody, SessionBody } from '../../../contract/admin/session.js';
import { NoContent } from '../../../contract/common.js';
import type { AppDeps } from '../../../deps.js';
import { signIn } from './login.service.js';
import { cookieOptions } from './session-hook.js';
import { closeSession, presentSession, SESSION_COOKIE } from './sessions.js';

/** Sign-in, sign-out and "who am I" of the admin panel. */
export const authRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/login',
      { config: { noSession: true }, schema: { hide: true, body: LoginBody, response: { 200: SessionBody } } },
      async (request, reply) => {
        const { token, session } = await signIn(deps.db, request.body, request.ip);
        reply.setCookie(SESSION_COOKIE, token, cookieOptions(deps.config));
        return presentSession(session);
      },
    );

    app.post('/logout', { schema: { hide: true, response: { 204: NoContent } } }, async (request, reply) => {
      await closeSession(deps.db, request.admin.id);
      const { maxAge: _maxAge, ...options } = cookieOptions(deps.config);
      reply.clearCookie(SESSION_COOKIE, options);
      return reply.code(204).send(null);
    });

    app.get('/session', { schema: { hide: true, response: { 200: SessionBody } } }, async (request) => presentSession(request.admin));
  };
