import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/connect.js';
import { createLogger } from '../../src/http/logger.js';

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  config: Config;
  /** Every log line the app wrote, as text (for checks that secrets never reach a log). */
  logs: string[];
  close(): Promise<void>;
}

/**
 * The app on a real database: a fresh SQLite file per call, or the PostgreSQL database of
 * DATABASE_URL (shared; tests isolate themselves with a fresh account each).
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-test-'));
  const config = testConfig({ DATA_DIR: dataDir, ...env });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const db = await openDatabase(config, { poolSize: 4 });
  const app = await buildApp({ config, db, logger: createLogger('debug', sink) });
  await app.ready();
  return {
    app,
    db,
    config,
    logs,
    async close() {
      await app.close();
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function testConfig(env: Record<string, string>): Config {
  return loadConfig({
    HERALD_SECRET: 'test-secret-not-for-production',
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    ...env,
  });
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
    post: (url: string, payload: unknown, headers: Record<string, string> = {}) => call({ method: 'POST', url, payload: payload as object, headers }),
    get: (url: string, headers: Record<string, string> = {}) => call({ method: 'GET', url, headers }),
  };
}
