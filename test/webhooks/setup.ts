import type { WebhookDeliveriesTable } from '../../src/db/schema.js';
import { inTransaction } from '../../src/db/transaction.js';
import { type ContactProfile, getContactProfile, writeContact } from '../../src/modules/contacts/contacts.service.js';
import { enqueueWebhookDeliveries } from '../../src/webhooks/enqueue.js';
import { WebhookWorker, type WebhookWorkerOptions } from '../../src/webhooks/worker.js';
import { insertSend, makeAccount, makeEmailCampaign, makeField, makeKpi, randomEmail, randomPhone } from '../helpers/factories.js';
import { captureLogger, processEnv, startApp, type TestApp } from '../helpers/harness.js';

/**
 * The app on a database of its own. A webhook worker claims due deliveries of every account,
 * so on a shared PostgreSQL the workers of test files running in parallel would take each
 * other's rows: each file gets a fresh PostgreSQL database (SQLite is a fresh file anyway).
 */
export const startIsolatedApp = (env: Record<string, string> = {}): Promise<TestApp> => startApp({ env, ownDatabase: true });

/** Environment for bin/herald on the same database as the test app. */
export const cliEnv = processEnv;

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
 * An account with a custom field and a KPI, a contact using them, an email campaign (its
 * sealed secret) made with the services, and a `sent` send written directly (the dispatcher
 * lives elsewhere); then the deliveries enqueued in a transaction, as the dispatcher does.
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

  const { id: campaignId, webhookSecret: secret } = await makeEmailCampaign(t, accountId, {
    from: 'team@example.com',
    subject: 'Hello',
    html: '<p>Hello</p>',
    text: 'Hello',
  });
  const { id: sendId } = await insertSend(t.db, accountId, campaignId, {
    contactId: contact.id,
    status: 'sent',
    at: now,
    attempts: 1,
    to: contact.emails[0]!,
    processed: true,
    delivered: true,
  });
  await inTransaction(t.db, (tx) => enqueueWebhookDeliveries(tx, { accountId, campaignId, sendId, urls, contact, now }));
  return { accountId, campaignId, sendId, secret, contact, enqueuedAt: now, deliveries: await deliveriesOf(t, sendId) };
}

export function deliveriesOf(t: TestApp, sendId: string) {
  return t.db.kysely.selectFrom('webhook_deliveries').selectAll().where('send_id', '=', sendId).orderBy('position').execute();
}

export function attemptsOf(t: TestApp, deliveryId: string) {
  return t.db.kysely
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempted_at')
    .orderBy('id')
    .execute();
}

/** Ends whatever a test left open, so a later test's worker never picks it up. */
export async function closeOpenDeliveries(t: TestApp): Promise<void> {
  await t.db.kysely
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', lease_until: null })
    .where('status', 'in', ['pending', 'delivering'])
    .execute();
}
