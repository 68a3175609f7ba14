import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCampaign, updateCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { apiClient, assertMissingScope } from '../helpers/app.js';
import { makeKey, makeTenant, randomEmail, randomPhone } from '../helpers/factories.js';
import { makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';

let t: TestHerald;
before(async () => {
  t = await startTestHerald();
});
after(() => t.close());

async function setup(campaign: Parameters<typeof makeEmailCampaign>[2] = {}) {
  const tenant = await makeTenant(t.db, t.config);
  const api = apiClient(t.app, tenant.key);
  const email = randomEmail();
  const phone = randomPhone();
  const lead = await api.post('/api/leads', { email, phone, name: 'Alan Turing', tracker: `v-${phone.slice(1)}x` });
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, campaign);
  return { ...tenant, api, email, phone, leadId: lead.body.id as string, campaignId };
}

const sendCount = async (campaignId: string) =>
  Number(
    (
      await t.db.kysely
        .selectFrom('sends')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', campaignId)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('trigger: the lead string', () => {
  test('is read as an email, a + phone, a digits-only phone, a contact id, or a visitor id', async () => {
    const s = await setup({ reentry: true });
    const digits = s.phone.slice(1);
    for (const lead of [s.email, s.email.toUpperCase(), s.phone, digits, s.leadId, `v-${digits}x`]) {
      const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead });
      assert.equal(res.status, 200, `${lead}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.leadId, s.leadId, lead);
    }
  });

  test('a lead string matching no contact: 404 Lead not found, nothing queued', async () => {
    const s = await setup();
    for (const lead of ['nobody@example.com', '+33612345678', '1234567', 'ld_unknown', 'visitor-unknown']) {
      const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead });
      assert.deepEqual(res.body, { statusCode: 404, error: 'Not Found', code: 'LEAD_NOT_FOUND', message: 'Lead not found' }, lead);
    }
    assert.equal(await sendCount(s.campaignId), 0);
  });
});

describe('trigger: a lead object', () => {
  test('creates the contact and triggers in the same call', async () => {
    const s = await setup();
    const email = randomEmail();
    const res = await s.api.post('/api/campaigns/trigger', {
      campaignId: s.campaignId,
      lead: { email, name: 'New Person', tags: ['From Trigger'] },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'queued');
    const profile = await getContactProfile(t.db, s.accountId, { email });
    assert.equal(profile?.id, res.body.leadId);
    assert.deepEqual(profile?.tags, ['from-trigger']);
  });

  test('updates an existing contact before triggering', async () => {
    const s = await setup();
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: { email: s.email, name: 'Alan M. Turing' } });
    assert.equal(res.body.leadId, s.leadId);
    assert.equal((await getContactProfile(t.db, s.accountId, { id: s.leadId }))?.name, 'Alan M. Turing');
  });

  test('an invalid lead object is a Validation Error and writes nothing at all', async () => {
    const s = await setup();
    const email = randomEmail();
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: { email, name: 'X' } });
    assert.deepEqual([res.status, res.body.message], [400, 'Validation Error']);
    assert.equal(await getContactProfile(t.db, s.accountId, { email }), undefined);
    assert.equal(await sendCount(s.campaignId), 0);
  });

  test('problems inside a lead object are named by their path in the request: /lead/email, /lead/name ...', async () => {
    const s = await setup();
    const trigger = (lead: object) => s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead });
    const paths = (res: { body: { details: { path: string }[] } }) => res.body.details.map((d) => d.path);
    // Checked before the database (the contact write's own normalisation).
    const bad = await trigger({
      email: 'not-an-address',
      phone: '+1',
      name: 'X',
      tags: ['t'.repeat(300)],
      note: { text: ' ', createdBy: '' },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(paths(bad), ['/lead/email', '/lead/phone', '/lead/name', '/lead/tags/0', '/lead/note/text', '/lead/note/createdBy']);
    // Checked when the contact is created (what a new contact needs).
    const incomplete = await trigger({ email: randomEmail() });
    assert.deepEqual([incomplete.status, paths(incomplete)], [400, ['/lead/name']]);
    const noAddress = await trigger({ id: 'ld_nobody', name: 'No Address' });
    assert.deepEqual([noAddress.status, paths(noAddress)], [400, ['/lead/email']]);
    // Checked after the merge with the stored metadata.
    await trigger({ email: s.email, metadata: { a: 'x'.repeat(10 * 1024) } });
    const full = await trigger({ email: s.email, metadata: { b: 'y'.repeat(10 * 1024) } });
    assert.deepEqual([full.status, paths(full)], [400, ['/lead/metadata']]);
    assert.equal(await sendCount(s.campaignId), 1);
  });

  test('a refused trigger (campaign not active) does not keep the contact write', async () => {
    const s = await setup();
    await updateCampaign(t.db, t.config, s.accountId, s.campaignId, { active: false });
    const email = randomEmail();
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: { email, name: 'Rolled Back' } });
    assert.deepEqual([res.status, res.body.message], [400, 'Campaign is not active']);
    assert.equal(await getContactProfile(t.db, s.accountId, { email }), undefined);
  });

  test('needs leads:write besides campaigns:trigger: 403 before the object is looked at', async () => {
    const s = await setup();
    const key = await makeKey(t.db, t.config, s.accountId, { scopes: ['campaigns:trigger'] });
    const api = apiClient(t.app, key.key);
    for (const lead of [
      { email: randomEmail(), name: 'Valid Name' },
      { email: 'not-an-email', name: 1 },
    ]) {
      const res = await api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead });
      // The details name the member that needs the scope (decisions.md, Public API).
      assertMissingScope(res, 'leads:write', '/lead');
    }
    // A string lead needs only campaigns:trigger.
    assert.equal((await api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email })).status, 200);
  });
});

describe('trigger and cancel: errors in order', () => {
  test('request shape: missing or mistyped campaignId and lead name their member', async () => {
    const s = await setup();
    const cases: [unknown, string][] = [
      [{ lead: s.email }, '/campaignId'],
      [{ campaignId: s.campaignId }, '/lead'],
      [{ campaignId: 12, lead: s.email }, '/campaignId'],
      [{ campaignId: s.campaignId, lead: 42 }, '/lead'],
      [{ campaignId: s.campaignId, lead: s.email, extra: true }, '/extra'],
    ];
    for (const [body, path] of cases) {
      for (const url of ['/api/campaigns/trigger', '/api/campaigns/cancel']) {
        const res = await s.api.post(url, body);
        assert.deepEqual([res.status, res.body.message], [400, 'Validation Error'], `${url} ${JSON.stringify(body)}`);
        assert.ok(
          res.body.details.some((d: { path: string }) => d.path === path || d.path.startsWith(path)),
          `${url} ${JSON.stringify(body)} -> ${JSON.stringify(res.body.details)}`,
        );
      }
    }
  });

  test("campaign not found (also another account's campaign) comes before lead not found", async () => {
    const s = await setup();
    const other = await setup();
    for (const campaignId of ['cmp_nope', other.campaignId]) {
      for (const url of ['/api/campaigns/trigger', '/api/campaigns/cancel']) {
        const res = await s.api.post(url, { campaignId, lead: 'nobody@example.com' });
        assert.deepEqual(res.body, { statusCode: 404, error: 'Not Found', code: 'CAMPAIGN_NOT_FOUND', message: 'Campaign not found' });
      }
    }
    assert.equal(await sendCount(other.campaignId), 0);
  });

  test('a campaign that is not API-triggered: 400 on trigger and cancel', async () => {
    const s = await setup({ schedule: 'manual' });
    for (const url of ['/api/campaigns/trigger', '/api/campaigns/cancel']) {
      const res = await s.api.post(url, { campaignId: s.campaignId, lead: s.email });
      assert.deepEqual([res.status, res.body.message], [400, 'Campaign is not configured for API triggers']);
    }
  });

  test('an inactive campaign: 400 on trigger, but cancel still works', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 300 });
    assert.equal((await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email })).body.status, 'pending');
    await updateCampaign(t.db, t.config, s.accountId, s.campaignId, { active: false });
    const trig = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual([trig.status, trig.body.message], [400, 'Campaign is not active']);
    const cancel = await s.api.post('/api/campaigns/cancel', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual([cancel.status, cancel.body.cancelled], [200, true]);
  });

  test('a never-activated campaign answers Campaign is not active', async () => {
    const s = await setup();
    const { id } = await createCampaign(t.db, t.config, s.accountId, { name: 'Draft', channel: 'email' });
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: id, lead: s.email });
    assert.deepEqual([res.status, res.body.message], [400, 'Campaign is not active']);
  });

  test('cancel with an unknown lead string: 404 Lead not found', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 60 });
    const res = await s.api.post('/api/campaigns/cancel', { campaignId: s.campaignId, lead: 'ghost@example.com' });
    assert.deepEqual([res.status, res.body.message], [404, 'Lead not found']);
  });

  test('a key without campaigns:trigger is refused on both calls', async () => {
    const s = await setup();
    const key = await makeKey(t.db, t.config, s.accountId, { scopes: ['leads:write', 'events:write'] });
    for (const url of ['/api/campaigns/trigger', '/api/campaigns/cancel']) {
      const res = await apiClient(t.app, key.key).post(url, { campaignId: s.campaignId, lead: s.email });
      assertMissingScope(res, 'campaigns:trigger');
    }
  });
});

describe('GET forms', () => {
  test('trigger and cancel with campaignId, lead and api-key in the query', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 300 });
    const q = (lead: string) => `campaignId=${s.campaignId}&lead=${encodeURIComponent(lead)}&api-key=${s.key}`;
    const trig = await apiClient(t.app).get(`/api/campaigns/trigger?${q(s.email)}`);
    assert.deepEqual([trig.status, trig.body.mode, trig.body.status, trig.body.leadId], [200, 'delay', 'pending', s.leadId]);
    const byPhone = await apiClient(t.app).get(`/api/campaigns/trigger?${q(s.phone)}`);
    assert.deepEqual([byPhone.body.sendId, byPhone.body.leadId], [trig.body.sendId, s.leadId], 'a %2B-encoded phone is read as a phone');
    const cancel = await apiClient(t.app).get(`/api/campaigns/cancel?${q(s.email)}`);
    assert.deepEqual(cancel.body, { cancelled: true, campaignId: s.campaignId, leadId: s.leadId });
    const again = await apiClient(t.app).get(`/api/campaigns/cancel?${q(s.email)}`);
    assert.equal(again.body.cancelled, false);
  });

  test('missing query parameters are Validation Errors; a missing key is 401', async () => {
    const s = await setup();
    const noLead = await apiClient(t.app).get(`/api/campaigns/trigger?campaignId=${s.campaignId}&api-key=${s.key}`);
    assert.deepEqual([noLead.status, noLead.body.message], [400, 'Validation Error']);
    assert.ok(noLead.body.details.some((d: { path: string }) => d.path === '/lead'));
    const noKey = await apiClient(t.app).get(`/api/campaigns/trigger?campaignId=${s.campaignId}&lead=${s.email}`);
    assert.deepEqual([noKey.status, noKey.body.message], [401, 'API key is required']);
  });
});

describe('tenant isolation', () => {
  test("account A cannot trigger or cancel for account B's contact, even with B's contact id", async () => {
    const a = await setup({ mode: 'delay', delaySeconds: 300 });
    const b = await setup({ mode: 'delay', delaySeconds: 300 });
    assert.equal((await b.api.post('/api/campaigns/trigger', { campaignId: b.campaignId, lead: b.email })).body.status, 'pending');
    for (const lead of [b.email, b.leadId, b.phone]) {
      const trig = await a.api.post('/api/campaigns/trigger', { campaignId: a.campaignId, lead });
      assert.deepEqual([trig.status, trig.body.message], [404, 'Lead not found'], lead);
    }
    const cancel = await a.api.post('/api/campaigns/cancel', { campaignId: b.campaignId, lead: b.email });
    assert.deepEqual([cancel.status, cancel.body.message], [404, 'Campaign not found']);
    const row = await t.db.kysely.selectFrom('sends').select('status').where('campaign_id', '=', b.campaignId).executeTakeFirstOrThrow();
    assert.equal(row.status, 'pending', "B's pending send is untouched");
  });
});

describe('trigger: details of a lead that fits neither form', () => {
  test('a lead object failing inside is named by its members only, not by the string form it is not', async () => {
    const s = await setup();
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: { email: s.email, name: 5, bogus: 1 } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.details, [
      { path: '/lead/name', message: 'must be string' },
      { path: '/lead/bogus', message: 'is not an accepted member' },
    ]);
  });

  test('a lead of neither type gets one line naming both', async () => {
    const s = await setup();
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: 5 });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.details, [{ path: '/lead', message: 'must be string or object' }]);
  });
});
