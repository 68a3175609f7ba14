import assert from 'node:assert/strict';
import type { DeliveryRequest } from '../../src/channels/channel.js';
import type { Db } from '../../src/db/connect.js';
import type { Plan } from '../../src/modules/accounts/accounts.service.js';
import type { Campaign } from '../../src/modules/campaigns/campaign.js';
import { type CampaignInput, getCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { type ContactProfile, getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { apiClient, type TestApp } from '../helpers/app.js';
import {
  insertSend,
  makeEmailCampaign,
  makeField,
  makeKpi,
  makeTenant,
  makeWhatsappCampaign,
  randomEmail,
  randomPhone,
  uniq,
} from '../helpers/factories.js';

/**
 * A contact with a bit of everything templates can show: a custom field, a KPI, tags and
 * metadata. Written through the public API, read back as the dispatcher will read it.
 */
export async function makeRichContact(t: TestApp, overrides: { name?: string; plan?: Plan } = {}) {
  const tenant = await makeTenant(t.db, t.config, { plan: overrides.plan });
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

/** An active campaign made with the campaign service (email unless `channel` says otherwise), read back as the dispatcher reads it. */
export async function insertCampaign(t: TestApp, accountId: string, settings: Partial<CampaignInput> = {}): Promise<Campaign> {
  const name = uniq('Campaign ');
  const { id } =
    settings.channel === 'whatsapp'
      ? await makeWhatsappCampaign(t, accountId, { name, ...settings })
      : await makeEmailCampaign(t, accountId, { name, ...settings });
  return getCampaign(t.db, accountId, id);
}

/** A send in `sending`, as the dispatcher holds it while a channel delivers. */
export const insertSendingSend = (db: Db, campaign: Campaign, contact: ContactProfile, to: string) =>
  insertSend(db, campaign.accountId, campaign.id, {
    contactId: contact.id,
    status: 'sending',
    channel: campaign.channel,
    leaseUntil: Date.now() + 60_000,
    attempts: 1,
    to,
  });

/** The DeliveryRequest the dispatcher builds for one claimed send. */
export async function makeDelivery(
  db: Db,
  campaign: Campaign,
  contact: ContactProfile,
  options: { to?: string; whatsapp?: { phoneNumberId: string; token: string } | null } = {},
): Promise<DeliveryRequest> {
  const to = options.to ?? (campaign.channel === 'email' ? contact.emails[0]! : contact.phones[0]!);
  const { id: sendId } = await insertSendingSend(db, campaign, contact, to);
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
