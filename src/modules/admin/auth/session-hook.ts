import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../../config.js';
import { safeEqual } from '../../../crypto.js';
import type { Db } from '../../../db/connect.js';
import { AppError } from '../../../errors.js';
import { type AdminSession, readSession, SESSION_COOKIE, SESSION_TTL_MS } from './sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in panel user of an admin API call. */
    admin: AdminSession;
  }
  interface FastifyContextConfig {
    /** Admin API: the route answers without a session (sign-in only). */
    noSession?: boolean;
    /** Admin API: members get 403 Administrators only. */
    adminOnly?: boolean;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** The cookie's attributes (docs/admin-api.md); Secure when the panel is served over https. */
export function cookieOptions(config: Pick<Config, 'publicUrl'>) {
  return {
    path: '/admin',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: config.publicUrl.startsWith('https:'),
    maxAge: SESSION_TTL_MS / 1000,
  };
}

/**
 * onRequest hook of the admin API, before any body is read: the session (401), then CSRF on
 * every request that can change something (403), then the role (403). SameSite=Lax already
 * keeps the cookie off cross-site POSTs in current browsers; the header check is what refuses
 * a forged form post everywhere, since a form cannot set a header.
 */
export function createSessionHook(db: Db, config: Pick<Config, 'publicUrl'>) {
  return async function requireSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.routeOptions.config.noSession) return;
    const token = request.cookies[SESSION_COOKIE];
    const found = token ? await readSession(db, token, Date.now()) : undefined;
    if (!found) throw new AppError('NOT_SIGNED_IN');
    const { session, slid } = found;
    if (!SAFE_METHODS.has(request.method)) {
      const sent = request.headers['x-csrf-token'];
      if (typeof sent !== 'string' || !safeEqual(sent, session.csrfToken)) throw new AppError('CSRF');
    }
    if (request.routeOptions.config.adminOnly && session.role !== 'admin') throw new AppError('ADMIN_ONLY');
    // The browser's copy of the cookie slides with the session.
    if (slid) reply.setCookie(SESSION_COOKIE, token!, cookieOptions(config));
    request.admin = session;
  };
}
