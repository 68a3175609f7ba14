import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppDeps } from '../../../deps.js';
import { cookieOptions } from './session-hook.js';
import { signIn } from './login.service.js';
import { closeSession, presentSession, SESSION_COOKIE } from './sessions.js';

const LoginBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 255 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

/** Sign-in, sign-out and "who am I" of the admin panel. */
export const authRoutes = (deps: AppDeps): FastifyPluginAsyncTypebox => async (app) => {
  app.post('/login', { config: { noSession: true }, schema: { hide: true, body: LoginBody } }, async (request, reply) => {
    const { token, session } = await signIn(deps.db, request.body, request.ip);
    reply.setCookie(SESSION_COOKIE, token, cookieOptions(deps.config));
    return presentSession(session);
  });

  app.post('/logout', { schema: { hide: true } }, async (request, reply) => {
    await closeSession(deps.db, request.admin.id);
    const { maxAge: _maxAge, ...options } = cookieOptions(deps.config);
    reply.clearCookie(SESSION_COOKIE, options);
    return reply.code(204).send();
  });

  app.get('/session', { schema: { hide: true } }, async (request) => presentSession(request.admin));
};
