import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/connect.js';
import type { Plan } from '../../src/modules/accounts/accounts.service.js';
import type { Role } from '../../src/modules/users/users.service.js';
import { makeUser as makeUserOf, PASSWORD } from '../helpers/factories.js';

/** What the admin tests need of a running app: startTestApp and startTestHerald both give it. */
export interface AdminTestEnv {
  app: FastifyInstance;
  db: Db;
  config: Config;
}

export interface Reply {
  status: number;
  headers: Record<string, unknown>;
  body: any;
  cookies: { name: string; value: string; [attribute: string]: unknown }[];
}

export { PASSWORD } from '../helpers/factories.js';

/** A fresh account with one user of that role; `accountId` reuses an account (factories.ts). */
export const makeUser = (t: AdminTestEnv, options: { role?: Role; plan?: Plan; accountId?: string } = {}) => makeUserOf(t.db, options);

async function call(app: FastifyInstance, options: InjectOptions): Promise<Reply> {
  const res = await app.inject(options);
  let body: unknown = res.body;
  try {
    body = res.json();
  } catch {
    // not JSON
  }
  return { status: res.statusCode, headers: res.headers, body, cookies: res.cookies as Reply['cookies'] };
}

/**
 * POST /login from `remoteAddress`: a random one unless given, since failures are counted per
 * IP in the database, which test runs on PostgreSQL share.
 */
export async function login(app: FastifyInstance, email: string, password: string, remoteAddress = randomIp()): Promise<Reply> {
  return call(app, { method: 'POST', url: '/admin/api/login', payload: { email, password }, remoteAddress });
}

/**
 * A signed-in panel: the session cookie on every call, the CSRF token on every write (unless
 * a test sets its own headers), JSON bodies.
 */
export interface Panel {
  cookie: string;
  csrf: string;
  session: any;
  get(url: string): Promise<Reply>;
  post(url: string, payload?: unknown, headers?: Record<string, string>): Promise<Reply>;
  put(url: string, payload: unknown): Promise<Reply>;
  patch(url: string, payload: unknown): Promise<Reply>;
  del(url: string): Promise<Reply>;
  raw(options: InjectOptions): Promise<Reply>;
}

export async function signIn(t: AdminTestEnv, email: string, password = PASSWORD): Promise<Panel> {
  const res = await login(t.app, email, password);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const cookie = res.cookies.find((c) => c.name === 'herald_session');
  assert.ok(cookie, 'the session cookie is set');
  return panel(t.app, cookie.value, res.body.csrfToken, res.body);
}

const rnd = () => Math.floor(Math.random() * 250) + 1;
export const randomIp = () => `10.${rnd()}.${rnd()}.${rnd()}`;

export function panel(app: FastifyInstance, cookieValue: string, csrf: string, session: unknown = undefined): Panel {
  const cookie = `herald_session=${cookieValue}`;
  const send = (
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
    headers: Record<string, string> = { 'x-csrf-token': csrf },
  ) =>
    call(app, {
      method,
      url: `/admin/api${url}`,
      headers: { cookie, ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  return {
    cookie,
    csrf,
    session,
    get: (url) => send('GET', url, undefined, {}),
    post: (url, payload, headers) => send('POST', url, payload, headers),
    put: (url, payload) => send('PUT', url, payload),
    patch: (url, payload) => send('PATCH', url, payload),
    del: (url) => send('DELETE', url),
    raw: (options) => call(app, { ...options, headers: { cookie, ...(options.headers ?? {}) } }),
  };
}

/** A signed-in user of a fresh account (admin unless said otherwise). */
export async function signedIn(t: AdminTestEnv, options: { role?: Role; plan?: Plan; accountId?: string } = {}) {
  const user = await makeUser(t, options);
  return { ...user, panel: await signIn(t, user.email) };
}

/** Asserts the error body of decisions.md with this status and message; returns the body. */
export function assertError(res: Reply, status: number, message: string, detailPath?: string): any {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.message, message, JSON.stringify(res.body));
  assert.equal(res.body.statusCode, status);
  if (detailPath !== undefined) {
    assert.ok(
      (res.body.details ?? []).some((d: { path: string }) => d.path === detailPath),
      `a detail at ${detailPath}: ${JSON.stringify(res.body.details)}`,
    );
  }
  return res.body;
}
