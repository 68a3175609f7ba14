import assert from 'node:assert/strict';
import type { Db } from '../../src/db/connect.js';
import { AppError, type ErrorCode } from '../../src/errors.js';
import { openTestDatabase, type TestDatabase, testConfig } from '../helpers/harness.js';

export { emailCampaign, insertEngagement, insertSend, whatsappCampaign } from '../helpers/factories.js';

/**
 * Campaign configuration is service and CLI code: tests need a real database and a config,
 * not the HTTP app. A fresh SQLite file per suite, or the shared DATABASE_URL PostgreSQL
 * (each test isolates itself with a fresh account). See test/helpers/harness.ts.
 */
export interface CampaignTestEnv extends TestDatabase {
  /** Same database and secret, with WEBHOOK_ALLOW_PRIVATE=true. */
  allowPrivate: TestDatabase['config'];
}

export async function openTestDb(): Promise<CampaignTestEnv> {
  const t = await openTestDatabase();
  const allowPrivate = testConfig({ DATA_DIR: t.config.dataDir, DATABASE_URL: t.config.databaseUrl ?? '', WEBHOOK_ALLOW_PRIVATE: 'true' });
  return Object.assign(t, { allowPrivate });
}

/** Asserts an AppError with this code; for VALIDATION, a detail at `path` whose message matches. */
export async function rejectsWith(promise: Promise<unknown>, code: ErrorCode, path?: string, pattern?: RegExp): Promise<AppError> {
  let caught: unknown;
  await assert.rejects(promise, (err: unknown) => {
    caught = err;
    return true;
  });
  assert.ok(caught instanceof AppError, `expected an AppError, got ${String(caught)}`);
  assert.equal(caught.code, code, `expected ${code}, got ${caught.code}: ${caught.message} ${JSON.stringify(caught.details)}`);
  if (path !== undefined) {
    const detail = caught.details?.find((d) => d.path === path);
    assert.ok(detail, `no problem at ${path}: ${JSON.stringify(caught.details)}`);
    if (pattern) assert.match(detail.message, pattern);
  }
  return caught;
}

export const campaignRow = (db: Db, id: string) =>
  db.kysely.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
