import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { ERROR_CODES, type ErrorCode, publicCode } from '../../src/errors.js';
import { startApp, type TestApp } from './harness.js';

export { type TestApp, testConfig } from './harness.js';

/**
 * The app on a real database: a fresh SQLite file per call, or the PostgreSQL database of
 * DATABASE_URL (shared; tests isolate themselves with a fresh account each). See harness.ts.
 */
export function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  return startApp({ env });
}

export interface ApiResponse {
  status: number;
  headers: Record<string, unknown>;
  body: any;
}

/** A small client for the public API: JSON in, parsed JSON out. */
export function apiClient(app: FastifyInstance, key?: string) {
  async function call(options: InjectOptions): Promise<ApiResponse> {
    const res = await app.inject({
      ...options,
      headers: { ...(key ? { 'x-service-api-key': key } : {}), ...(options.headers ?? {}) },
    });
    let body: unknown = res.body;
    try {
      body = res.json();
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, headers: res.headers, body };
  }
  return {
    call,
    post: (url: string, payload: unknown, headers: Record<string, string> = {}) =>
      call({ method: 'POST', url, payload: payload as object, headers }),
    get: (url: string, headers: Record<string, string> = {}) => call({ method: 'GET', url, headers }),
  };
}

/**
 * Asserts the whole error body of decisions.md: `{statusCode, error, code, message}` and nothing
 * else, `code` being the public code src/errors.ts gives that status and message.
 */
export function assertApiError(res: ApiResponse, status: number, error: string, message: string): void {
  const codes = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => ERROR_CODES[c][0] === status && ERROR_CODES[c][1] === message);
  const code = (res.body as { code?: string } | undefined)?.code;
  assert.ok(codes.map(publicCode).includes(code as never), `code ${code} is one of ${codes.join(', ')} (${message})`);
  assert.deepEqual({ status: res.status, body: res.body }, { status, body: { statusCode: status, error, code, message } });
}

/** The 403 of a missing scope: the spec's message, and the scope named in details (decisions.md, Public API). */
export function assertMissingScope(res: ApiResponse, scope: string, path = '/'): void {
  assert.deepEqual(
    { status: res.status, body: res.body },
    {
      status: 403,
      body: {
        statusCode: 403,
        error: 'Forbidden',
        code: 'API_KEY_FORBIDDEN',
        message: 'API key does not have the required permissions',
        details: [{ path, message: `requires scope ${scope}` }],
      },
    },
  );
}
