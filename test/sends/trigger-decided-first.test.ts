import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { updateAccount } from '../../src/modules/accounts/accounts.service.js';
import { deleteCampaign, updateCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { setContactFlags } from '../../src/modules/contacts/contact-lookups.js';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { createField, createKpi, deleteField, deleteKpi } from '../../src/modules/definitions/definitions.service.js';
import { apiClient } from '../helpers/app.js';

type ApiClient = ReturnType<typeof apiClient>;

import { makeAccount, makeKey, makeWhatsappCampaign, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * A trigger with a `lead` object for someone new is decided before its read, with the campaign
 * as the process last read it, and written in the read's statement only when the read finds the
 * campaign unchanged (trigger-decided-first.repo.ts, PostgreSQL). Whatever happened to the campaign,
 * the account or the contact since the process last read them, the answer and the rows are the
 * usual path's: these run on both engines, each after a trigger that let the process see the campaign.
 */
let t: TestHerald;
before(async () => {
  t = await startTestHerald({}, { role: 'api' });
});
after(() => t.close());

async function tenant(plan: 'free' | 'pro' = 'free'): Promise<{ accountId: string; api: ApiClient }> {
  const { id: accountId } = await makeAccount(t.db, { allowance: null, plan });
  const { key } = await makeKey(t.db, t.config, accountId);
  return { accountId, api: apiClient(t.app, key) };
}

/** A trigger for a new contact, after which the process has seen the campaign. */
async function seen(api: ApiClient, campaignId: string): Promise<void> {
  const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: randomEmail(), name: 'Seen' } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** The contact's tags, in the order stored. */
const tagsOf = async (accountId: string, contactId: string) =>
  (
    await t.db.kysely
      .selectFrom('contact_tags')
      .select('tag')
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .execute()
  ).map((r) => r.tag);

const contactsNamed = async (accountId: string, email: string) =>
  (
    await t.db.kysely
      .selectFrom('contact_emails')
      .select('contact_id')
      .where('account_id', '=', accountId)
      .where('email', '=', email)
      .execute()
  ).length;

test('a delay changed since the campaign was seen: the new contact waits the new delay', async () => {
  const { accountId, api } = await tenant();
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
  await seen(api, campaignId);
  await updateCampaign(t.db, t.config, accountId, campaignId, { delaySeconds: 60 });
  const before = Date.now();
  const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: randomEmail(), name: 'Ada' } });
  assert.equal(res.body.status, 'pending', JSON.stringify(res.body));
  const row = await sendRow(t.db, res.body.sendId);
  assert.ok(Number(row.due_at) >= before + 60_000 && Number(row.due_at) <= Date.now() + 60_000, `due ${row.due_at}`);
});

test('a mode changed since the campaign was seen: the new contact gets the new mode', async () => {
  const { accountId, api } = await tenant();
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
  await seen(api, campaignId);
  await updateCampaign(t.db, t.config, accountId, campaignId, { mode: 'immediate' });
  const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: randomEmail(), name: 'Ada' } });
  assert.deepEqual([res.body.status, res.body.mode], ['queued', 'immediate'], JSON.stringify(res.body));
});

/** What may change between two triggers that makes the second one refused, and its code. */
const REFUSALS: { since: string; change: (accountId: string, campaignId: string) => Promise<unknown>; code: string }[] = [
  {
    since: 'the campaign deactivated',
    change: (accountId, campaignId) => updateCampaign(t.db, t.config, accountId, campaignId, { active: false }),
    code: 'CAMPAIGN_NOT_ACTIVE',
  },
  {
    since: 'the campaign deleted',
    change: (accountId, campaignId) => deleteCampaign(t.db, accountId, campaignId),
    code: 'CAMPAIGN_NOT_FOUND',
  },
  {
    since: 'an allowance set (the allowance decides)',
    change: (accountId) => updateAccount(t.db, t.config, accountId, { allowance: 1 }),
    code: 'ALLOWANCE_EXHAUSTED',
  },
];

for (const { since, change, code } of REFUSALS) {
  test(`${since} since the campaign was seen: ${code}, and the contact is not created`, async () => {
    const { accountId, api } = await tenant();
    const { id: campaignId } = await makeEmailCampaign(t, accountId);
    await seen(api, campaignId);
    await change(accountId, campaignId);
    const email = randomEmail();
    const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada' } });
    assert.equal(res.body.code, code, JSON.stringify(res.body));
    assert.equal(await contactsNamed(accountId, email), 0);
  });
}

test('a lead that turns out to be known is decided on what the read found: re-entry off rejects it', async () => {
  const { accountId, api } = await tenant();
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { reentry: false });
  const email = randomEmail();
  const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada' } });
  assert.equal(first.body.status, 'queued', JSON.stringify(first.body));
  const again = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada' } });
  assert.deepEqual([again.body.status, again.body.leadId], ['rejected', first.body.leadId], JSON.stringify(again.body));
  assert.equal(await contactsNamed(accountId, email), 1);
});

test('a new contact with no address for the seen campaign channel: the contact written, an error send recorded', async () => {
  const { accountId, api } = await tenant('pro'); // WhatsApp campaigns are active on the pro plan only
  const { id: campaignId } = await makeWhatsappCampaign(t, accountId);
  const seenRes = await api.post('/api/campaigns/trigger', { campaignId, lead: { name: 'Seen', phone: '+14155550123' } });
  assert.equal(seenRes.body.status, 'queued', JSON.stringify(seenRes.body));
  const email = randomEmail();
  const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada' } });
  assert.equal(res.body.status, 'error', JSON.stringify(res.body));
  const row = await sendRow(t.db, res.body.sendId);
  assert.deepEqual([row.status, row.reason, row.contact_id], ['error', 'contact has no phone number', res.body.leadId]);
  assert.equal(await contactsNamed(accountId, email), 1);
});

/** A Delay campaign the process has seen, and a contact with a pending send of it. */
async function pendingFor(options: { delaySeconds?: number } = {}) {
  const { accountId, api } = await tenant();
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: options.delaySeconds ?? 3600 });
  const email = randomEmail();
  const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada' } });
  assert.equal(first.body.status, 'pending', JSON.stringify(first.body));
  return { accountId, api, campaignId, email, contactId: first.body.leadId as string, sendId: first.body.sendId as string };
}

test('a restart decided before the read: the same pending send, the contact written, the timer from now', async () => {
  const { accountId, api, campaignId, email, contactId, sendId } = await pendingFor();
  const before = Date.now();
  const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, tags: ['again'] }, data: { n: 2 } });
  assert.deepEqual({ ...res.body }, { campaignId, leadId: contactId, mode: 'delay', sendId, status: 'pending' }, JSON.stringify(res.body));
  const row = await sendRow(t.db, sendId);
  assert.ok(Number(row.due_at) >= before + 3_600_000, `due ${row.due_at}`);
  assert.equal(row.trigger_data, JSON.stringify({ n: 2 }));
  assert.deepEqual(await tagsOf(accountId, contactId), ['again']);
});

test('a delay changed since the campaign was seen: the restart waits the new delay', async () => {
  const { accountId, api, campaignId, email, sendId } = await pendingFor();
  await updateCampaign(t.db, t.config, accountId, campaignId, { delaySeconds: 60 });
  const before = Date.now();
  const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email } });
  assert.deepEqual([res.body.status, res.body.sendId], ['pending', sendId], JSON.stringify(res.body));
  const row = await sendRow(t.db, sendId);
  assert.ok(Number(row.due_at) >= before + 60_000 && Number(row.due_at) <= Date.now() + 60_000, `due ${row.due_at}`);
});

test('a contact opted out since its send was queued: recorded as an opt-out, the pending send left as it was', async () => {
  const { accountId, api, campaignId, email, contactId, sendId } = await pendingFor();
  const due = Number((await sendRow(t.db, sendId)).due_at);
  await setContactFlags(t.db.kysely, accountId, contactId, { optedOut: true });
  const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email } });
  assert.equal(res.body.status, 'optout', JSON.stringify(res.body));
  assert.notEqual(res.body.sendId, sendId);
  assert.equal(Number((await sendRow(t.db, sendId)).due_at), due);
});

test('a pending send cancelled since: a new pending send, not a restart of the cancelled one', async () => {
  const { api, campaignId, email, sendId } = await pendingFor();
  const cancel = await api.post('/api/campaigns/cancel', { campaignId, lead: email });
  assert.equal(cancel.body.cancelled, true, JSON.stringify(cancel.body));
  const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email } });
  assert.equal(res.body.status, 'pending', JSON.stringify(res.body));
  assert.notEqual(res.body.sendId, sendId);
  assert.equal((await sendRow(t.db, sendId)).status, 'cancelled');
});

test('concurrent triggers for one new email once the campaign is seen: one contact, one queued send, every write applied once', async () => {
  const { accountId, api } = await tenant();
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { reentry: false });
  await seen(api, campaignId);
  const email = randomEmail();
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Race Lead', tags: [`t${i}`] } }),
    ),
  );
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200], JSON.stringify(results.find((r) => r.status !== 200)?.body));
  assert.equal(new Set(results.map((r) => r.body.leadId)).size, 1, 'one contact');
  assert.deepEqual(results.map((r) => r.body.status as string).sort(), ['queued', ...Array.from({ length: 11 }, () => 'rejected')]);
  const contactId = results[0]!.body.leadId as string;
  assert.equal((await tagsOf(accountId, contactId)).length, 12, 'every write applied once');
  assert.equal(await contactsNamed(accountId, email), 1);
});

test('concurrent restarts decided before the read: one pending send, every write applied once', async () => {
  const { accountId, api, campaignId, email, contactId, sendId } = await pendingFor();
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) => api.post('/api/campaigns/trigger', { campaignId, lead: { email, tags: [`r${i}`] }, data: { i } })),
  );
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200], JSON.stringify(results.find((r) => r.status !== 200)?.body));
  assert.deepEqual(
    [...new Set(results.map((r) => `${r.body.status} ${r.body.sendId} ${r.body.leadId}`))],
    [`pending ${sendId} ${contactId}`],
  );
  const sends = await t.db.kysely.selectFrom('sends').select('status').where('campaign_id', '=', campaignId).execute();
  assert.deepEqual(sends, [{ status: 'pending' }]);
  assert.equal((await tagsOf(accountId, contactId)).length, 10, 'every write applied once');
});

/** A contact's custom field values (by field name) and KPI totals, as its profile shows them. */
async function fieldsAndKpis(accountId: string, leadId: string) {
  const profile = await getContactProfile(t.db, accountId, { id: leadId });
  return { fields: profile?.fields, kpis: profile?.kpis };
}

test('a field retyped and a KPI deleted since the process read them: the contact is written on the new definitions', async () => {
  const { accountId, api } = await tenant();
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
  const field = await createField(t.db, accountId, { name: 'Size', type: 'string' });
  await createKpi(t.db, accountId, { id: 'orders', name: 'Orders' });
  const lead = (email: string, size: unknown) => ({ email, name: 'Ada', fields: [{ key: 'Size', value: size }], kpis: { orders: 1 } });
  const email = randomEmail();
  // Seen: the campaign, the field and the KPI; the contact gets a pending send.
  const first = await api.post('/api/campaigns/trigger', { campaignId, lead: lead(email, 'large') });
  assert.equal(first.body.status, 'pending', JSON.stringify(first.body));
  assert.deepEqual(await fieldsAndKpis(accountId, first.body.leadId), { fields: { Size: 'large' }, kpis: { orders: 1 } });
  await deleteField(t.db, accountId, field.id);
  await createField(t.db, accountId, { name: 'Size', type: 'number' });
  await deleteKpi(t.db, accountId, 'orders');
  // The restart: 'small' is no number, 'orders' no KPI any more.
  const restart = await api.post('/api/campaigns/trigger', { campaignId, lead: lead(email, 'small') });
  assert.deepEqual([restart.body.status, restart.body.sendId], ['pending', first.body.sendId], JSON.stringify(restart.body));
  assert.deepEqual(await fieldsAndKpis(accountId, first.body.leadId), { fields: {}, kpis: {} });
  // Someone new, on the definitions just read again: the number is stored.
  const created = await api.post('/api/campaigns/trigger', { campaignId, lead: lead(randomEmail(), 7) });
  assert.equal(created.body.status, 'pending', JSON.stringify(created.body));
  assert.deepEqual(await fieldsAndKpis(accountId, created.body.leadId), { fields: { Size: 7 }, kpis: {} });
});

test('a field created since a trigger named it unknown: the next new contact gets its value', async () => {
  const { accountId, api } = await tenant();
  const { id: campaignId } = await makeEmailCampaign(t, accountId);
  const lead = () => ({ email: randomEmail(), name: 'Ada', fields: [{ key: 'Country', value: 'FR' }] });
  const first = await api.post('/api/campaigns/trigger', { campaignId, lead: lead() });
  assert.deepEqual(await fieldsAndKpis(accountId, first.body.leadId), { fields: {}, kpis: {} });
  await createField(t.db, accountId, { name: 'Country', type: 'string' });
  const next = await api.post('/api/campaigns/trigger', { campaignId, lead: lead() });
  assert.equal(next.body.status, 'queued', JSON.stringify(next.body));
  assert.deepEqual(await fieldsAndKpis(accountId, next.body.leadId), { fields: { Country: 'FR' }, kpis: {} });
});
