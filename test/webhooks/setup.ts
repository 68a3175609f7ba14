import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import type { WebhookDeliveriesTable } from '../../src/db/schema.js';
import { inTransaction } from '../../src/db/transaction.js';
import { createLogger } from '../../src/http/logger.js';
import { newId } from '../../src/ids.js';
import { newWebhookSecret, sealWebhookSecret } from '../../src/modules/campaigns/webhook-secret.js';
import { getContactProfile, writeContact, type ContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { enqueueWebhookDeliveries } from '../../src/webhooks/enqueue.js';
import { WebhookWorker, type WebhookWorkerOptions } from '../../src/webhooks/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeField, makeKpi, randomEmail, randomPhone } from '../helpers/factories.js';

/**
 * The app on a database of its own. A webhook worker claims due deliveries of every account,
 * so on a shared PostgreSQL the workers of test files running in parallel would take each
 * other's rows: each file gets a fresh PostgreSQL database (SQLite is a fresh file anyway).
 */
export async function startIsolatedApp(env: Record<string, string> = {}): Promise<TestApp> {
  const shared = process.env.DATABASE_URL;
  if (!shared) return startTestApp(env);
  const name = `herald_test_wh_${randomBytes(6).toString('hex')}`;
  await adminQuery(shared, `create database ${name}`);
  const url = new URL(shared);
  url.pathname = `/${name}`;
  const t = await startTestApp({ ...env, DATABASE_URL: url.toString() });
  return {
    ...t,
    async close() {
      await t.close();
      await adminQuery(shared, `drop database if exists ${name}`);
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

/** Environment for bin/herald on the same database as the test app. */
export const cliEnv = (t: TestApp) => ({ DATA_DIR: t.config.dataDir, HERALD_SECRET: t.config.secret, DATABASE_URL: t.config.databaseUrl ?? '', LOG_LEVEL: 'silent' });

/** A logger whose lines the test can read (to check that secrets never reach them). */
export function captureLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('debug', sink), lines };
}

export function makeWorker(t: TestApp, options: Partial<WebhookWorkerOptions> = {}) {
  return new WebhookWorker({ db: t.db, config: t.config, logger: captureLogger().logger, ...options });
}

export interface Fixture {
  accountId: string;
  campaignId: string;
  sendId: string;
  /** The campaign's `whsec_` secret in clear, for the receiver's verification. */
  secret: string;
  contact: ContactProfile;
  enqueuedAt: number;
  deliveries: WebhookDeliveriesTable[];
}

/**
 * An account with a custom field and a KPI, a contact using them, an email campaign with a
 * sealed secret and a `sent` send, all written directly (the campaign service and dispatcher
 * live elsewhere); then the deliveries enqueued in a transaction, as the dispatcher does.
 */
export async function makeFixture(t: TestApp, urls: string[], options: { now?: number } = {}): Promise<Fixture> {
  const now = options.now ?? Date.now();
  const { id: accountId } = await makeAccount(t.db);
  await makeField(t.db, accountId, 'City', 'string');
  await makeKpi(t.db, accountId, 'orders', 'Orders');
  const written = await writeContact(t.db, accountId, {
    name: 'Ada Lövelace',
    email: randomEmail(),
    phone: randomPhone(),
    tags: ['VIP Client'],
    fields: [{ key: 'city', value: 'Paris' }],
    kpis: { orders: 3 },
    metadata: { plan: 'gold', referrer: null },
  });
  const contact = (await getContactProfile(t.db, accountId, { id: written.id }))!;

  const secret = newWebhookSecret();
  const campaignId = newId('cmp');
  await t.db.kysely
    .insertInto('campaigns')
    .values({
      id: campaignId,
      account_id: accountId,
      name: 'Welcome',
      channel: 'email',
      schedule: 'api',
      mode: 'immediate',
      delay_seconds: 0,
      reentry: 0,
      cooldown_days: 0,
      active: 1,
      email_from: 'team@example.com',
      email_subject: 'Hello',
      email_html: '<p>Hello</p>',
      email_text: 'Hello',
      whatsapp_template: null,
      whatsapp_language: null,
      whatsapp_params: '[]',
      webhook_secret: sealWebhookSecret(t.config, secret),
      created_at: now,
      updated_at: now,
    })
    .execute();
  const sendId = newId('snd');
  await t.db.kysely
    .insertInto('sends')
    .values({
      id: sendId,
      account_id: accountId,
      campaign_id: campaignId,
      contact_id: contact.id,
      status: 'sent',
      channel: 'email',
      due_at: now,
      lease_until: null,
      attempts: 1,
      reason: null,
      to_address: contact.emails[0]!,
      provider_message_id: null,
      processed_at: now,
      delivered_at: now,
      sent_at: now,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await inTransaction(t.db, (tx) => enqueueWebhookDeliveries(tx, { accountId, campaignId, sendId, urls, contact, now }));
  return { accountId, campaignId, sendId, secret, contact, enqueuedAt: now, deliveries: await deliveriesOf(t, sendId) };
}

export function deliveriesOf(t: TestApp, sendId: string) {
  return t.db.kysely.selectFrom('webhook_deliveries').selectAll().where('send_id', '=', sendId).orderBy('position').execute();
}

export function attemptsOf(t: TestApp, deliveryId: string) {
  return t.db.kysely.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempted_at').orderBy('id').execute();
}

/** Ends whatever a test left open, so a later test's worker never picks it up. */
export async function closeOpenDeliveries(t: TestApp): Promise<void> {
  await t.db.kysely.updateTable('webhook_deliveries').set({ status: 'failed', lease_until: null }).where('status', 'in', ['pending', 'delivering']).execute();
}
