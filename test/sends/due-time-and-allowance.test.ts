import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { updateAccount } from '../../src/modules/accounts/accounts.service.js';
import { updateCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { apiClient } from '../helpers/app.js';
import { makeAccount, makeKey, randomEmail, randomPhone } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, sendRow, sleep, startTestHerald, type TestHerald } from '../helpers/herald.js';

let t: TestHerald;
before(async () => {
  // 100 concurrent triggers after a lead update exceed the default burst of 100: the per-key
  // rate limit is not under test here (test/http/limits.test.ts).
  t = await startTestHerald({ RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' });
});
after(() => t.close());

async function setup(campaign: Parameters<typeof makeEmailCampaign>[2] = {}, account: { allowance?: number | null } = {}) {
  const { id: accountId } = await makeAccount(t.db, account);
  const { key } = await makeKey(t.db, t.config, accountId);
  const api = apiClient(t.app, key);
  const email = randomEmail();
  const lead = await api.post('/api/leads', { email, name: 'Katherine Johnson' });
  const { id: campaignId } = await makeEmailCampaign(t, accountId, campaign);
  return { accountId, key, api, email, leadId: lead.body.id as string, campaignId };
}

const settled = (sendId: string) =>
  eventually(
    async () => {
      const row = await sendRow(t.db, sendId);
      return !['pending', 'queued', 'sending'].includes(row.status) && row;
    },
    4000,
    `send ${sendId} to settle`,
  );

describe('checks again when a delayed send comes due', () => {
  test('a contact who opted out during the delay gets Optout, nothing sent', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 1 });
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    await setContactFlags(t.db, s.accountId, s.leadId, { optedOut: true });
    const row = await settled(res.body.sendId);
    assert.deepEqual([row.status, row.sent_at], ['optout', null]);
  });

  test('a contact who received the campaign meanwhile gets Rejected', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 1 });
    const delayed = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    // The campaign switches to Immediate and the contact receives it before the delay ends.
    await updateCampaign(t.db, t.config, s.accountId, s.campaignId, { mode: 'immediate', delaySeconds: 0 });
    const immediate = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    assert.equal(immediate.body.status, 'queued');
    assert.equal((await settled(immediate.body.sendId)).status, 'sent');
    assert.equal((await settled(delayed.body.sendId)).status, 'rejected');
  });

  test('a campaign deactivated before the send comes due: error, campaign not active', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 1 });
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    await updateCampaign(t.db, t.config, s.accountId, s.campaignId, { active: false });
    const row = await settled(res.body.sendId);
    assert.deepEqual([row.status, row.reason], ['error', 'campaign not active']);
  });
});

describe('the channel address', () => {
  test('an email campaign for a contact without an email: status error with a reason, 200', async () => {
    const s = await setup();
    const phoneOnly = await s.api.post('/api/leads', { phone: randomPhone(), name: 'No Mail' });
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: phoneOnly.body.id });
    assert.deepEqual([res.status, res.body.status], [200, 'error']);
    const row = await sendRow(t.db, res.body.sendId);
    assert.deepEqual([row.status, row.reason], ['error', 'contact has no email address']);
  });

  test('the primary (first stored) email is used', async () => {
    const s = await setup();
    const second = randomEmail();
    await s.api.post('/api/leads', { id: s.leadId, email: second });
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: second });
    assert.equal((await settled(res.body.sendId)).to_address, s.email);
  });
});

describe('at most one pending send per contact and campaign', () => {
  test('100 concurrent triggers of a Delay campaign for one contact leave exactly one pending send', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 600 });
    const results = await Promise.all(
      Array.from({ length: 100 }, () => s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email })),
    );
    assert.deepEqual([...new Set(results.map((r) => r.status))], [200]);
    assert.deepEqual([...new Set(results.map((r) => r.body.status))], ['pending']);
    assert.equal(new Set(results.map((r) => r.body.sendId)).size, 1, 'one send id for all');
    const rows = await t.db.kysely.selectFrom('sends').select(['status']).where('campaign_id', '=', s.campaignId).execute();
    assert.deepEqual(rows, [{ status: 'pending' }]);
  });
});

describe('the monthly allowance', () => {
  const trigger = (s: Awaited<ReturnType<typeof setup>>, email: string) =>
    s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: email });
  async function contacts(s: Awaited<ReturnType<typeof setup>>, n: number) {
    const emails = Array.from({ length: n }, randomEmail);
    for (const email of emails) await s.api.post('/api/leads', { email, name: 'Some One' });
    return emails;
  }

  test('a trigger past the allowance is refused with 402 and nothing is queued', async () => {
    const s = await setup({}, { allowance: 2 });
    const [a, b, c] = await contacts(s, 3);
    assert.equal((await trigger(s, a!)).body.status, 'queued');
    assert.equal((await trigger(s, b!)).body.status, 'queued');
    const refused = await trigger(s, c!);
    assert.deepEqual(refused.body, {
      statusCode: 402,
      error: 'Payment Required',
      code: 'ALLOWANCE_EXHAUSTED',
      message: 'Monthly send allowance exhausted',
    });
    const rows = await t.db.kysely.selectFrom('sends').select('id').where('campaign_id', '=', s.campaignId).execute();
    assert.equal(rows.length, 2);
  });

  test('a cancelled delayed send does not count; a restarted one counts once', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 600 }, { allowance: 2 });
    const [a, b, c] = await contacts(s, 3);
    await trigger(s, a!);
    assert.equal((await s.api.post('/api/campaigns/cancel', { campaignId: s.campaignId, lead: a })).body.cancelled, true);
    assert.equal((await trigger(s, b!)).body.status, 'pending');
    assert.equal((await trigger(s, b!)).body.status, 'pending', 'restart');
    assert.equal((await trigger(s, c!)).body.status, 'pending', 'b counts once, a not at all: c fits');
    assert.equal((await trigger(s, a!)).status, 402, 'now two count: the allowance is used up');
    assert.equal((await trigger(s, b!)).body.status, 'pending', 'restarting a pending send needs no allowance');
  });

  test('rejected and opted-out triggers answer 200 with their status even when the allowance is used up', async () => {
    const s = await setup({}, { allowance: 1 });
    const [a, b] = await contacts(s, 2);
    assert.equal((await trigger(s, a!)).body.status, 'queued');
    assert.equal((await trigger(s, a!)).body.status, 'rejected');
    const optedOut = await s.api.post('/api/leads', { email: b, name: 'Some One' });
    await setContactFlags(t.db, s.accountId, optedOut.body.id, { optedOut: true });
    assert.equal((await trigger(s, b!)).body.status, 'optout');
  });

  test('rejected and opted-out sends do not count: they leave the allowance as it was', async () => {
    const s = await setup({}, { allowance: 2 });
    const [a, b, c] = await contacts(s, 3);
    assert.equal((await trigger(s, a!)).body.status, 'queued');
    assert.equal((await trigger(s, a!)).body.status, 'rejected');
    const optedOut = await s.api.post('/api/leads', { email: b, name: 'Some One' });
    await setContactFlags(t.db, s.accountId, optedOut.body.id, { optedOut: true });
    assert.equal((await trigger(s, b!)).body.status, 'optout');
    assert.equal((await trigger(s, c!)).body.status, 'queued', 'one counted send so far: c fits');
  });

  test('sends of earlier months do not count', async () => {
    const s = await setup({}, { allowance: 1 });
    const [a, b] = await contacts(s, 2);
    const first = await trigger(s, a!);
    const lastMonth = new Date();
    lastMonth.setUTCDate(0);
    await t.db.kysely.updateTable('sends').set({ created_at: lastMonth.getTime() }).where('id', '=', first.body.sendId).execute();
    assert.equal((await trigger(s, b!)).body.status, 'queued');
  });

  test('an account without an allowance is never refused; setting one takes effect', async () => {
    const s = await setup({}, { allowance: null });
    const emails = await contacts(s, 3);
    for (const email of emails) assert.equal((await trigger(s, email)).body.status, 'queued');
    await updateAccount(t.db, t.config, s.accountId, { allowance: 3 });
    const [extra] = await contacts(s, 1);
    await sleep(0);
    assert.equal((await trigger(s, extra!)).status, 402);
  });
});
