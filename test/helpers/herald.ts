import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/connect.js';
import { startHerald, type Herald, type Role } from '../../src/herald.js';
import { createLogger } from '../../src/http/logger.js';
import { createCampaign, type CampaignInput } from '../../src/modules/campaigns/campaigns.service.js';
import { testConfig } from './app.js';

export interface TestHerald {
  herald: Herald;
  app: FastifyInstance;
  db: Db;
  config: Config;
  logs: string[];
  close(): Promise<void>;
}

/** The whole service as `npm start` assembles it (HTTP API + dispatcher + webhooks), on a real database. */
export async function startTestHerald(env: Record<string, string> = {}, options: { role?: Role; leaseMs?: number; stalledAfterMs?: number } = {}): Promise<TestHerald> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-test-'));
  const config = testConfig({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true', ...env });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const herald = await startHerald({ config, logger: createLogger('info', sink), role: options.role ?? 'all', dispatcher: { leaseMs: options.leaseMs, stalledAfterMs: options.stalledAfterMs } });
  return {
    herald,
    app: herald.app!,
    db: herald.db,
    config,
    logs,
    async close() {
      await herald.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An active email campaign with a small personalised template; override any setting. */
export async function makeEmailCampaign(t: { db: Db; config: Config }, accountId: string, overrides: Partial<CampaignInput> = {}) {
  return createCampaign(t.db, t.config, accountId, {
    name: 'Welcome',
    channel: 'email',
    from: 'Acme <news@acme.test>',
    subject: 'Hello {{ contact.name }}',
    html: '<p>Hi {{ contact.name }}</p>',
    text: 'Hi {{ contact.name }}',
    active: true,
    ...overrides,
  });
}

/** Waits until check() is true (polling), or fails after timeoutMs. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function sendRow(db: Db, sendId: string) {
  return db.kysely.selectFrom('sends').selectAll().where('id', '=', sendId).executeTakeFirstOrThrow();
}
