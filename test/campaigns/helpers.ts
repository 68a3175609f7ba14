import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/connect.js';
import type { SendStatus } from '../../src/db/schema.js';
import { AppError, type ErrorCode } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import type { CampaignInput } from '../../src/modules/campaigns/campaigns.service.js';
import { testConfig } from '../helpers/app.js';
import { uniq } from '../helpers/factories.js';

/**
 * Campaign configuration is service and CLI code: tests need a real database and a config,
 * not the HTTP app. A fresh SQLite file per suite, or the shared DATABASE_URL PostgreSQL
 * (each test isolates itself with a fresh account).
 */
export interface CampaignTestEnv {
  db: Db;
  config: Config;
  /** Same database and secret, with WEBHOOK_ALLOW_PRIVATE=true. */
  allowPrivate: Config;
  close(): Promise<void>;
}

export async function openTestDb(): Promise<CampaignTestEnv> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-campaigns-'));
  const config = testConfig({ DATA_DIR: dataDir });
  const allowPrivate = testConfig({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true' });
  const db = await openDatabase(config, { poolSize: 4 });
  return {
    db,
    config,
    allowPrivate,
    async close() {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A complete email campaign: activating it needs nothing more. */
export const emailCampaign = (extra: Partial<CampaignInput> = {}): CampaignInput => ({
  name: uniq('Welcome '),
  channel: 'email',
  from: 'Herald <news@example.com>',
  subject: 'Hello {{ contact.name }}',
  html: '<p>Hi {{ contact.name }}</p>',
  ...extra,
});

/** A complete WhatsApp campaign. */
export const whatsappCampaign = (extra: Partial<CampaignInput> = {}): CampaignInput => ({
  name: uniq('Reminder '),
  channel: 'whatsapp',
  whatsappTemplate: 'appointment_reminder',
  language: 'en_US',
  whatsappParams: ['{{ contact.name }}'],
  ...extra,
});

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

export const campaignRow = (db: Db, id: string) => db.kysely.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

export async function insertContact(db: Db, accountId: string): Promise<string> {
  const id = newId('ld');
  const now = Date.now();
  await db.kysely
    .insertInto('contacts')
    .values({ id, account_id: accountId, name: uniq('Contact '), archived: 0, opted_out: 0, metadata: '{}', created_at: now, updated_at: now })
    .execute();
  return id;
}

/** A send row in a given state, written directly: statistics must count what the table holds. */
export async function insertSend(
  db: Db,
  accountId: string,
  campaignId: string,
  status: SendStatus,
  options: { processed?: boolean; delivered?: boolean; contactId?: string } = {},
): Promise<{ id: string; contactId: string }> {
  const contactId = options.contactId ?? (await insertContact(db, accountId));
  const id = newId('snd');
  const now = Date.now();
  await db.kysely
    .insertInto('sends')
    .values({
      id,
      account_id: accountId,
      campaign_id: campaignId,
      contact_id: contactId,
      status,
      channel: 'email',
      due_at: now,
      lease_until: null,
      attempts: 0,
      reason: null,
      to_address: null,
      provider_message_id: null,
      processed_at: options.processed ? now : null,
      delivered_at: options.delivered ? now : null,
      sent_at: status === 'sent' ? now : null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return { id, contactId };
}

export async function insertEngagement(db: Db, accountId: string, campaignId: string, send: { id: string; contactId: string }, kind: 'open' | 'click'): Promise<void> {
  await db.kysely
    .insertInto('engagements')
    .values({ id: uniq('eng_'), account_id: accountId, campaign_id: campaignId, send_id: send.id, contact_id: send.contactId, kind, url: kind === 'click' ? 'https://example.com/' : null, created_at: Date.now() })
    .execute();
}
