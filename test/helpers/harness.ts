import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import pino, { type Logger } from 'pino';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { type Herald, type Role, startHerald } from '../../src/herald.js';
import { createLogger } from '../../src/http/logger.js';

/**
 * THE test harness: the one way tests start Herald in-process.
 *
 * - `openTestDatabase()`: a migrated database and its config, no HTTP app (service tests).
 * - `startApp()`: the HTTP app (`buildApp`) on that database, driven with `app.inject()`.
 * - `startService()`: the whole service as `npm start` assembles it (`startHerald`: HTTP API,
 *   dispatcher, webhook worker), optionally listening on a real socket.
 *
 * Every start gets a fresh SQLite file in a temp dir; on PostgreSQL (DATABASE_URL set) it uses
 * the shared database (tests isolate themselves with a fresh account each, see factories.ts),
 * or, with `ownDatabase`, a PostgreSQL database of its own, dropped on close (for workers that
 * claim rows of every account). The other helpers (`startTestApp`, `startTestHerald`,
 * `openTestDb`, `startIsolatedApp`, `startRunningHerald`, `startPanelHerald`) are thin wrappers.
 *
 * Separate processes (`bin/herald`) are started by cli.ts and processes.ts, with `processEnv()`.
 */

export interface HarnessOptions {
  /** Configuration variables over the test defaults (HERALD_SECRET, DATABASE_URL, DATA_DIR). */
  env?: Record<string, string>;
  /** A fresh PostgreSQL database for this start (SQLite always gets a fresh file). */
  ownDatabase?: boolean;
  /** Log level of the captured logger (lines land in `logs`). */
  logLevel?: string;
  /** SQLite: told of every write run outside a transaction (db/connect.ts). */
  onWriteOutsideTransaction?: (sql: string) => void;
}

export interface TestDatabase {
  db: Db;
  config: Config;
  close(): Promise<void>;
}

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  config: Config;
  /** Every log line the app wrote, as text (for checks that secrets never reach a log). */
  logs: string[];
  close(): Promise<void>;
}

export interface TestService extends TestApp {
  herald: Herald;
  /** http://127.0.0.1:PORT when started with `listen`. */
  baseUrl?: string;
}

export const TEST_SECRET = 'test-secret-not-for-production';

export function testConfig(env: Record<string, string>): Config {
  return loadConfig({
    HERALD_SECRET: TEST_SECRET,
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    ...env,
  });
}

/** Environment for a `bin/herald` process on the same database as an in-process start. */
export const processEnv = (t: { config: Config }) => ({
  DATA_DIR: t.config.dataDir,
  HERALD_SECRET: t.config.secret,
  DATABASE_URL: t.config.databaseUrl ?? '',
  LOG_LEVEL: 'silent',
});

/**
 * A logger whose lines the test can read (to check that no secret is ever logged). By default
 * the service's own logger (`createLogger`, with its redaction); `raw: true` gives plain pino,
 * so that a check sees what the code under test logged before any redaction.
 */
export function captureLogger(options: { level?: string; raw?: boolean } = {}): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const level = options.level ?? 'debug';
  return { logger: options.raw ? pino({ level }, sink) : createLogger(level, sink), lines };
}

/** A temp DATA_DIR, and the DATABASE_URL to use: the shared one, or a fresh PostgreSQL database. */
async function prepare(prefix: string, options: HarnessOptions): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `herald-${prefix}-`));
  const env: Record<string, string> = { DATA_DIR: dataDir };
  const shared = options.env?.DATABASE_URL ?? process.env.DATABASE_URL;
  let dropDatabase: string | undefined;
  if (options.ownDatabase && shared) {
    dropDatabase = `herald_test_${randomBytes(6).toString('hex')}`;
    await adminQuery(shared, `create database ${dropDatabase}`);
    const url = new URL(shared);
    url.pathname = `/${dropDatabase}`;
    env.DATABASE_URL = url.toString();
  }
  return {
    env,
    async cleanup() {
      if (dropDatabase) await adminQuery(shared!, `drop database if exists ${dropDatabase}`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A migrated database and its config, without the HTTP app (service and CLI tests). */
export async function openTestDatabase(options: HarnessOptions = {}): Promise<TestDatabase> {
  const { env, cleanup } = await prepare('db', options);
  const config = testConfig({ ...(options.env ?? {}), ...env });
  const db = await openDatabase(config, { poolSize: 4, onWriteOutsideTransaction: options.onWriteOutsideTransaction });
  return {
    db,
    config,
    async close() {
      await db.close();
      await cleanup();
    },
  };
}

/** The HTTP app (`buildApp`) on a real database, ready for `app.inject()` (or `app.listen()`). */
export async function startApp(options: HarnessOptions = {}): Promise<TestApp> {
  const { env, cleanup } = await prepare('test', options);
  const config = testConfig({ ...(options.env ?? {}), ...env });
  const { logger, lines } = captureLogger({ level: options.logLevel ?? 'debug' });
  const db = await openDatabase(config, { poolSize: 4, onWriteOutsideTransaction: options.onWriteOutsideTransaction });
  const app = await buildApp({ config, db, logger });
  await app.ready();
  return {
    app,
    db,
    config,
    logs: lines,
    async close() {
      await app.close();
      await db.close();
      await cleanup();
    },
  };
}

export interface ServiceOptions extends HarnessOptions {
  role?: Role;
  /** Listen on 127.0.0.1 (on PORT if env gives one, else a free port); sets `baseUrl`. */
  listen?: boolean;
  dispatcher?: { leaseMs?: number; stalledAfterMs?: number; concurrency?: number };
}

/** The whole service as `npm start` assembles it (HTTP API + dispatcher + webhooks), on a real database. */
export async function startService(options: ServiceOptions = {}): Promise<TestService> {
  const { env, cleanup } = await prepare('test', options);
  const config = testConfig({
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...(options.listen ? { PORT: '0', HOST: '127.0.0.1' } : {}),
    ...(options.env ?? {}),
    ...env,
  });
  const { logger, lines } = captureLogger({ level: options.logLevel ?? 'info' });
  const herald = await startHerald({
    config,
    logger,
    role: options.role ?? 'all',
    listen: options.listen ?? false,
    dispatcher: options.dispatcher,
  });
  const baseUrl = options.listen ? `http://127.0.0.1:${(herald.app!.server.address() as AddressInfo).port}` : undefined;
  return {
    herald,
    app: herald.app!,
    db: herald.db,
    config,
    logs: lines,
    baseUrl,
    async close() {
      await herald.close();
      await cleanup();
    },
  };
}

/** A port nobody listens on right now (the OS picks it; we release it and listen there). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
