import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * A cancel reads its `lead` string like a trigger (service-spec.md, "How `lead` given as a
 * string is read"): an email, a phone, a contact id or a visitor id. Its statement is compiled
 * once per form (cancel.repo.ts), so each form is pinned here: each finds the pending send.
 */
let t: TestHerald;
before(async () => {
  t = await startTestHerald({});
});
after(() => t.close());

test('a cancel finds the pending send by email, phone, contact id and visitor id; a blank lead is 404', async () => {
  const tenant = await makeTenant(t.db, t.config);
  const api = apiClient(t.app, tenant.key);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 3600 });
  const email = randomEmail();
  const phone = `+4479${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
  const tracker = `v-${phone.slice(1)}`;
  const lead = await api.post('/api/leads', { email, phone, name: 'Ada Forms', tracker });
  assert.equal(lead.status, 200, JSON.stringify(lead.body));
  const leadId = lead.body.id as string;
  for (const form of [email.toUpperCase(), phone, leadId, tracker]) {
    const trigger = await api.post('/api/campaigns/trigger', { campaignId, lead: leadId });
    assert.equal(trigger.body.status, 'pending', JSON.stringify(trigger.body));
    const cancel = await api.post('/api/campaigns/cancel', { campaignId, lead: form });
    assert.deepEqual(cancel.body, { cancelled: true, campaignId, leadId }, `lead given as ${form}`);
    const again = await api.post('/api/campaigns/cancel', { campaignId, lead: form });
    assert.deepEqual(again.body, { cancelled: false, campaignId, leadId }, `again, as ${form}`);
  }
  const blank = await api.post('/api/campaigns/cancel', { campaignId, lead: '   ' });
  assert.equal(blank.status, 404, JSON.stringify(blank.body));
});
