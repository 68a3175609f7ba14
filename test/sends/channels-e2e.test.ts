import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { updateAccount } from '../../src/modules/accounts/accounts.service.js';
import { createCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import { FakeWhatsAppCloudApi } from '../fakes/whatsapp-cloud-api.js';
import { apiClient } from '../helpers/app.js';
import { makeAccount, makeField, makeKey, makeKpi, randomEmail, randomPhone } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';

/** From the API call to the outside world: WhatsApp template messages and signed webhooks. */
let t: TestHerald;
let sink: SmtpSink;
let cloud: FakeWhatsAppCloudApi;
let receiver: WebhookReceiver;
before(async () => {
  sink = await SmtpSink.start();
  cloud = await FakeWhatsAppCloudApi.start();
  receiver = await WebhookReceiver.start();
  t = await startTestHerald({ SMTP_URL: sink.url, WHATSAPP_API_URL: cloud.url });
});
after(async () => {
  await t.close();
  await Promise.all([sink.close(), cloud.close(), receiver.close()]);
});

async function tenant(plan: 'free' | 'pro' = 'free') {
  const { id: accountId } = await makeAccount(t.db, { plan });
  const { key } = await makeKey(t.db, t.config, accountId);
  return { accountId, api: apiClient(t.app, key) };
}

describe('WhatsApp campaigns', () => {
  test('a trigger sends the approved template to the primary phone through the Cloud API, with parameters from contact data', async () => {
    const { accountId, api } = await tenant('pro');
    const phoneNumberId = `10${Date.now()}`;
    cloud.addPhoneNumber(phoneNumberId, 'EAAG-test-token');
    cloud.addTemplate('order_update', 'en_US', 2);
    await updateAccount(t.db, t.config, accountId, { whatsapp: { phoneNumberId, token: 'EAAG-test-token' } });
    await makeField(t.db, accountId, 'Order', 'string');
    const { id: campaignId } = await createCampaign(t.db, t.config, accountId, {
      name: 'Order update',
      channel: 'whatsapp',
      whatsappTemplate: 'order_update',
      language: 'en_US',
      whatsappParams: ['{{ contact.name }}', '{{ contact.fields.Order }}'],
      active: true,
    });
    const phone = randomPhone();
    const res = await api.post('/api/campaigns/trigger', {
      campaignId,
      lead: { phone, name: 'Mary Jackson', fields: [{ key: 'order', value: 'A-42' }] },
    });
    assert.deepEqual([res.status, res.body.status], [200, 'queued']);
    const row = await eventually(
      async () => {
        const r = await sendRow(t.db, res.body.sendId);
        return r.status === 'sent' && r;
      },
      4000,
      'the WhatsApp send',
    );
    const request = cloud.accepted.find((r) => r.phoneNumberId === phoneNumberId);
    assert.ok(request, 'the Cloud API received the message');
    assert.equal(request.headers.authorization, 'Bearer EAAG-test-token');
    assert.equal(request.body.to, phone.slice(1));
    assert.deepEqual(request.body.template, {
      name: 'order_update',
      language: { code: 'en_US' },
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Mary Jackson' },
            { type: 'text', text: 'A-42' },
          ],
        },
      ],
    });
    assert.equal(row.provider_message_id, request.wamid);
    assert.equal(row.delivered_at, null, 'delivered comes later, from the status callback');
    assert.deepEqual(cloud.unexpected, []);
  });

  test('a contact without a phone gets status error for a WhatsApp campaign', async () => {
    const { accountId, api } = await tenant('pro');
    const { id: campaignId } = await createCampaign(t.db, t.config, accountId, {
      name: 'WA',
      channel: 'whatsapp',
      whatsappTemplate: 'hello',
      language: 'en',
      active: true,
    });
    const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: randomEmail(), name: 'Mail Only' } });
    assert.deepEqual([res.status, res.body.status], [200, 'error']);
    assert.equal((await sendRow(t.db, res.body.sendId)).reason, 'contact has no phone number');
  });
});

describe('webhooks of an email campaign', () => {
  test('every send posts the contact data, signed so a Standard Webhooks library verifies it', async () => {
    const { accountId, api } = await tenant();
    await makeKpi(t.db, accountId, 'ltv');
    const urls = [receiver.url('/one'), receiver.url('/two')];
    const { id: campaignId, webhookSecret } = await makeEmailCampaign(t, accountId, { webhooks: urls });
    assert.match(webhookSecret, /^whsec_/);
    const email = randomEmail();
    const res = await api.post('/api/campaigns/trigger', {
      campaignId,
      lead: { email, name: 'Dorothy Vaughan', tags: ['VIP'], kpis: { ltv: 5 }, metadata: { plan: 'gold' } },
    });
    const hooks = await eventually(
      () => {
        const got = receiver.requests.filter((r) => r.body.toString().includes(res.body.sendId));
        return got.length === 2 && got;
      },
      5000,
      'both webhooks',
    );
    assert.deepEqual(hooks.map((h) => h.url).sort(), ['/one', '/two']);
    const verifier = new Webhook(webhookSecret);
    for (const hook of hooks) {
      const payload = verifier.verify(hook.body.toString(), hook.headers as Record<string, string>) as any;
      assert.equal(payload.type, 'campaign.sent');
      assert.match(payload.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.deepEqual(payload.data, {
        campaignId,
        sendId: res.body.sendId,
        contact: {
          id: res.body.leadId,
          name: 'Dorothy Vaughan',
          emails: [email],
          phones: [],
          tags: ['vip'],
          fields: {},
          kpis: { ltv: 5 },
          metadata: { plan: 'gold' },
        },
      });
    }
    // A body altered in transit fails verification.
    assert.throws(() => verifier.verify(hooks[0]!.body.toString().replace('Dorothy', 'Eve'), hooks[0]!.headers as Record<string, string>));
  });

  test('a send that does not go out (rejected) posts no webhook', async () => {
    const { accountId, api } = await tenant();
    const { id: campaignId } = await makeEmailCampaign(t, accountId, { webhooks: [receiver.url('/rejected')] });
    const email = randomEmail();
    const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Once Only' } });
    await eventually(() => receiver.requests.some((r) => r.body.toString().includes(first.body.sendId)), 5000, 'the first webhook');
    const second = await api.post('/api/campaigns/trigger', { campaignId, lead: email });
    assert.equal(second.body.status, 'rejected');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(receiver.requests.filter((r) => r.body.toString().includes(second.body.sendId)).length, 0);
  });
});
