import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { claimBatch } from '../../src/dispatcher/dispatch-claim.js';
import { apiClient } from '../helpers/app.js';
import { makeAccount, makeKey, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * Concurrent triggers as one write unit each (issue 12): on PostgreSQL a trigger reads, decides
 * and writes with a guard and no transaction, and a guard that fails reads again; these races
 * must end exactly as serial triggers would. On SQLite (one writer) they pin the same outcome.
 * An API-only process: no dispatcher claims sends behind the tests' back.
 */
let t: TestHerald;
before(async () => {
  t = await startTestHerald({ RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' }, { role: 'api' });
});
after(() => t.close());

async function tenant(allowance: number | null) {
  const { id: accountId } = await makeAccount(t.db, { allowance });
  const { key } = await makeKey(t.db, t.config, accountId);
  return { accountId, api: apiClient(t.app, key) };
}

async function contacts(api: ReturnType<typeof apiClient>, n: number): Promise<string[]> {
  const emails = Array.from({ length: n }, randomEmail);
  for (const email of emails) assert.equal((await api.post('/api/leads', { email, name: 'Some One' })).status, 200);
  return emails;
}

test('concurrent immediate triggers for one contact, re-entry off: exactly one queued, the others rejected', async () => {
  const { accountId, api } = await tenant(null);
  const [email] = await contacts(api, 1);
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { reentry: false });
  const results = await Promise.all(Array.from({ length: 30 }, () => api.post('/api/campaigns/trigger', { campaignId, lead: email })));
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200], JSON.stringify(results.find((r) => r.status !== 200)?.body));
  const statuses = results.map((r) => r.body.status as string).sort();
  assert.deepEqual(statuses, ['queued', ...Array.from({ length: 29 }, () => 'rejected')]);
  const rows = await t.db.kysely.selectFrom('sends').select('status').where('campaign_id', '=', campaignId).execute();
  assert.equal(rows.filter((r) => r.status === 'queued').length, 1);
  assert.equal(rows.length, 30, 'every trigger recorded once');
});

test('concurrent triggers of several campaigns for one contact all queue, more of them than a unit has attempts', async () => {
  const { accountId, api } = await tenant(100);
  const [email] = await contacts(api, 1);
  const campaigns = [];
  // Each queued send moves the contact's version, so every one of these invalidates the others'
  // reads: retries run in a transaction that locks the contact first and waits its turn.
  for (let i = 0; i < 16; i++) campaigns.push((await makeEmailCampaign(t, accountId)).id);
  const results = await Promise.all(campaigns.map((campaignId) => api.post('/api/campaigns/trigger', { campaignId, lead: email })));
  assert.deepEqual(
    results.map((r) => [r.status, r.body.status]),
    campaigns.map(() => [200, 'queued']),
  );
});

test('concurrent triggers at the allowance limit never exceed it', async () => {
  const { accountId, api } = await tenant(5);
  const emails = await contacts(api, 20);
  const { id: campaignId } = await makeEmailCampaign(t, accountId);
  const results = await Promise.all(emails.map((lead) => api.post('/api/campaigns/trigger', { campaignId, lead })));
  assert.equal(results.filter((r) => r.status === 200 && r.body.status === 'queued').length, 5);
  assert.equal(results.filter((r) => r.status === 402 && r.body.code === 'ALLOWANCE_EXHAUSTED').length, 15);
  const rows = await t.db.kysely.selectFrom('sends').select('id').where('account_id', '=', accountId).execute();
  assert.equal(rows.length, 5);
});

test('concurrent triggers far from the allowance all pass', async () => {
  const { accountId, api } = await tenant(1000);
  const emails = await contacts(api, 30);
  const { id: campaignId } = await makeEmailCampaign(t, accountId);
  const results = await Promise.all(emails.map((lead) => api.post('/api/campaigns/trigger', { campaignId, lead })));
  assert.deepEqual([...new Set(results.map((r) => `${r.status} ${r.body.status}`))], ['200 queued']);
});

test('a Delay re-trigger racing a worker claim never loses or duplicates the send', async () => {
  const { accountId, api } = await tenant(null);
  const emails = await contacts(api, 10);
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 600, reentry: false });
  for (const lead of emails) {
    const first = await api.post('/api/campaigns/trigger', { campaignId, lead });
    assert.equal(first.body.status, 'pending');
    // Due, and before anything else due in the shared database (the claim takes the earliest
    // one): a worker's claim and a restart (which moves it 10 minutes on) race for it.
    await t.db.kysely.updateTable('sends').set({ due_at: 0, wake_at: 0 }).where('id', '=', first.body.sendId).execute();
    const [retrigger, claimed] = await Promise.all([
      api.post('/api/campaigns/trigger', { campaignId, lead }),
      claimBatch(t.db, Date.now(), 60_000, 1).then((batch) => batch.sends),
    ]);
    assert.equal(retrigger.status, 200, JSON.stringify(retrigger.body));
    const rows = await t.db.kysely
      .selectFrom('sends')
      .select(['id', 'status'])
      .where('campaign_id', '=', campaignId)
      .where('contact_id', '=', first.body.leadId)
      .execute();
    if (claimed.some((s) => s.id === first.body.sendId)) {
      // The worker won: the send goes out, the re-trigger is Rejected (re-entry off), no second send.
      assert.equal(retrigger.body.status, 'rejected');
      assert.deepEqual(rows.map((r) => r.status).sort(), ['rejected', 'sending']);
    } else {
      // The restart won: the same send waits again, nothing claimed.
      assert.deepEqual([retrigger.body.status, retrigger.body.sendId], ['pending', first.body.sendId]);
      assert.deepEqual(rows, [{ id: first.body.sendId, status: 'pending' }]);
    }
  }
});

// A `lead` object writes the contact and the send together (on PostgreSQL in one statement
// after two reads, trigger-with-lead.ts); these races end as serial triggers would too.

test('concurrent triggers with a lead object for one new email: one contact, one queued send, the others rejected', async () => {
  const { accountId, api } = await tenant(null);
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { reentry: false });
  const email = randomEmail();
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Race Lead', tags: [`t${i}`] } }),
    ),
  );
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200], JSON.stringify(results.find((r) => r.status !== 200)?.body));
  assert.equal(new Set(results.map((r) => r.body.leadId)).size, 1, 'one contact');
  assert.deepEqual(results.map((r) => r.body.status as string).sort(), ['queued', ...Array.from({ length: 11 }, () => 'rejected')]);
  const [contactId] = results.map((r) => r.body.leadId as string);
  const tags = await t.db.kysely.selectFrom('contact_tags').select('tag').where('contact_id', '=', contactId!).execute();
  assert.equal(tags.length, 12, 'every write applied once');
});

test('concurrent Delay triggers with a lead object for one contact: one pending send, restarted, every KPI increment counted once', async () => {
  const { accountId, api } = await tenant(null);
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 600 });
  const kpiId = `visits_${Date.now()}`;
  await t.db.kysely.insertInto('kpis').values({ kpi_id: kpiId, account_id: accountId, name: 'Visits', created_at: 0 }).execute();
  const [email] = await contacts(api, 1);
  const results = await Promise.all(
    Array.from({ length: 10 }, () => api.post('/api/campaigns/trigger', { campaignId, lead: { email, kpis: { [kpiId]: 1 } } })),
  );
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200], JSON.stringify(results.find((r) => r.status !== 200)?.body));
  assert.equal(new Set(results.map((r) => r.body.sendId)).size, 1, 'one pending send');
  const rows = await t.db.kysely.selectFrom('sends').select('status').where('campaign_id', '=', campaignId).execute();
  assert.deepEqual(rows, [{ status: 'pending' }]);
  const total = await t.db.kysely
    .selectFrom('contact_kpis')
    .select('value_micros')
    .where('account_id', '=', accountId)
    .where('kpi_id', '=', kpiId)
    .executeTakeFirstOrThrow();
  assert.equal(Number(total.value_micros), 10_000_000);
});
