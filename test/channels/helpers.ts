import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import type { DeliveryRequest } from '../../src/channels/channel.js';
import type { CampaignsTable } from '../../src/db/schema.js';
import type { Db } from '../../src/db/connect.js';
import { newId } from '../../src/ids.js';
import { toCampaign, type Campaign } from '../../src/modules/campaigns/campaign.js';
import { getContactProfile, type ContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { apiClient, type TestApp } from '../helpers/app.js';
import { makeField, makeKpi, makeTenant, randomEmail, randomPhone, uniq } from '../helpers/factories.js';

/** A logger whose lines the test can read (to check that no secret is ever logged). */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

/**
 * A contact with a bit of everything templates can show: a custom field, a KPI, tags and
 * metadata. Written through the public API, read back as the dispatcher will read it.
 */
export async function makeRichContact(t: TestApp, overrides: { name?: string } = {}) {
  const tenant = await makeTenant(t.db, t.config);
  await makeField(t.db, tenant.accountId, 'City', 'string');
  await makeKpi(t.db, tenant.accountId, 'orders', 'Orders');
  const email = randomEmail();
  const phone = randomPhone();
  const res = await apiClient(t.app, tenant.key).post('/api/leads', {
    email,
    phone,
    name: overrides.name ?? 'Ada Lovelace',
    tags: ['VIP Customer'],
    fields: [{ key: 'city', value: 'Lyon' }],
    kpis: { orders: 3 },
    metadata: { plan: 'gold' },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const contact = await getContactProfile(t.db, tenant.accountId, { id: res.body.id });
  assert.ok(contact);
  return { ...tenant, contact, email, phone };
}

/** A campaign row written directly (the campaign service is not what these tests are about). */
export async function insertCampaign(db: Db, accountId: string, settings: Partial<CampaignsTable> = {}): Promise<Campaign> {
  const now = Date.now();
  const row: CampaignsTable = {
    id: newId('cmp'),
    account_id: accountId,
    name: uniq('Campaign '),
    channel: 'email',
    schedule: 'api',
    mode: 'immediate',
    delay_seconds: 0,
    reentry: 0,
    cooldown_days: 0,
    active: 1,
    email_from: 'Acme <news@acme.test>',
    email_subject: 'Hello {{ contact.name }}',
    email_html: '<p>Hi {{ contact.name }}</p>',
    email_text: 'Hi {{ contact.name }}',
    whatsapp_template: null,
    whatsapp_language: null,
    whatsapp_params: '[]',
    webhook_secret: 'v1.not-used-here',
    created_at: now,
    updated_at: now,
    ...settings,
  };
  await db.kysely.insertInto('campaigns').values(row).execute();
  return toCampaign(row, []);
}

/** A send row in `sending`, as the dispatcher holds it while a channel delivers. */
export async function insertSend(db: Db, campaign: Campaign, contact: ContactProfile, to: string): Promise<string> {
  const now = Date.now();
  const id = newId('snd');
  await db.kysely
    .insertInto('sends')
    .values({
      id,
      account_id: campaign.accountId,
      campaign_id: campaign.id,
      contact_id: contact.id,
      status: 'sending',
      channel: campaign.channel,
      due_at: now,
      lease_until: now + 60_000,
      attempts: 1,
      reason: null,
      to_address: to,
      provider_message_id: null,
      processed_at: null,
      delivered_at: null,
      sent_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

/** The DeliveryRequest the dispatcher builds for one claimed send. */
export async function makeDelivery(
  db: Db,
  campaign: Campaign,
  contact: ContactProfile,
  options: { to?: string; whatsapp?: { phoneNumberId: string; token: string } | null } = {},
): Promise<DeliveryRequest> {
  const to = options.to ?? (campaign.channel === 'email' ? contact.emails[0]! : contact.phones[0]!);
  const sendId = await insertSend(db, campaign, contact, to);
  return {
    send: { id: sendId, accountId: campaign.accountId, campaignId: campaign.id, contactId: contact.id, attempts: 1 },
    campaign,
    contact,
    to,
    account: { id: campaign.accountId, whatsapp: options.whatsapp ?? null },
  };
}

/** The rejection of a promise, for assertions on DeliveryError. */
export async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected the delivery to fail');
}
