import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { listOutbox } from '../../src/channels/transports.js';
import { MAX_JSON_DEPTH } from '../../src/json-limits.js';
import { updateAccount } from '../../src/modules/accounts/accounts.service.js';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import { FakeWhatsAppCloudApi } from '../fakes/whatsapp-cloud-api.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, makeWhatsappCampaign, randomEmail, randomPhone } from '../helpers/factories.js';
import { startService } from '../helpers/harness.js';
import { eventually, makeEmailCampaign, sendRow, sleep, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * Issue 10: a trigger's optional `data` object (per-send data, never written onto the contact),
 * rendered as `{{ trigger.* }}` and carried in the webhook payload as `data.trigger`, observed
 * where it ends up: the SMTP sink, the fake Cloud API, a webhook receiver, the outbox.
 */
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

const mailsTo = (email: string) => sink.messages.filter((m) => m.envelope.to.includes(email));

async function setup(campaign: Parameters<typeof makeEmailCampaign>[2] = {}, plan: 'free' | 'pro' = 'free') {
  const tenant = await makeTenant(t.db, t.config, { plan });
  const api = apiClient(t.app, tenant.key);
  const email = randomEmail();
  const { id: campaignId, webhookSecret } = await makeEmailCampaign(t, tenant.accountId, {
    subject: 'Order {{ trigger.order }} for {{ contact.name }}',
    html: '<p>Order {{ trigger.order }}: <a href="{{ trigger.link }}">track it</a> {{ trigger.items[1].sku }}</p>',
    text: 'Order {{ trigger.order }} ({{ trigger.total }})',
    ...campaign,
  });
  const trigger = (data?: unknown, lead: unknown = { email, name: 'Katherine Johnson' }) =>
    api.post('/api/campaigns/trigger', data === undefined ? { campaignId, lead } : { campaignId, lead, data });
  /** A raw JSON body: the test data is never passed through JSON.stringify. */
  const triggerRaw = (dataJson: string) =>
    api.call({
      method: 'POST',
      url: '/api/campaigns/trigger',
      payload: `{"campaignId":${JSON.stringify(campaignId)},"lead":{"email":${JSON.stringify(email)},"name":"Deep Data"},"data":${dataJson}}`,
      headers: { 'content-type': 'application/json' },
    });
  return { ...tenant, api, email, campaignId, webhookSecret, trigger, triggerRaw };
}

const sendsOf = (campaignId: string) => t.db.kysely.selectFrom('sends').selectAll().where('campaign_id', '=', campaignId).execute();

const sentRow = (sendId: string) =>
  eventually(
    async () => {
      const row = await sendRow(t.db, sendId);
      return row.status === 'sent' && row;
    },
    4000,
    `send ${sendId} sent`,
  );

/** `levels` objects nested under key `a` (level 1 is the outer object), built as text. */
const nestedObject = (levels: number) => `${'{"a":'.repeat(levels - 1)}{"a":1}${'}'.repeat(levels - 1)}`;

describe('trigger data: refused when it is not a small, shallow object', () => {
  const validation = (details: { path: string; message: string }[]) => ({
    statusCode: 400,
    error: 'Bad Request',
    code: 'VALIDATION_ERROR',
    message: 'Validation Error',
    details,
  });

  test('not an object (string, list, number, null): 400 at /data, no send, no contact', async () => {
    const s = await setup();
    for (const data of ['order 42', ['A-42'], 42, null]) {
      const res = await s.trigger(data);
      assert.equal(res.status, 400, JSON.stringify(data));
      assert.deepEqual(res.body, validation([{ path: '/data', message: 'must be object' }]), JSON.stringify(data));
    }
    assert.deepEqual(await sendsOf(s.campaignId), []);
    assert.equal(await getContactProfile(t.db, s.accountId, { email: s.email }), undefined, 'the lead object was not written');
  });

  test('over 16 KiB of JSON: 400 at /data, no send; exactly 16 KiB is accepted', async () => {
    const s = await setup();
    // {"blob":"…"} is 11 bytes of JSON around the string.
    const tooBig = await s.trigger({ blob: 'x'.repeat(16 * 1024 - 10) });
    assert.deepEqual([tooBig.status, tooBig.body], [400, validation([{ path: '/data', message: 'must be at most 16 KiB (as JSON)' }])]);
    assert.deepEqual(await sendsOf(s.campaignId), []);
    assert.equal(await getContactProfile(t.db, s.accountId, { email: s.email }), undefined);

    // Multi-byte characters count as their UTF-8 bytes: 8,187 × "é" (2 bytes each) is 16,385 bytes of JSON.
    const wide = await s.trigger({ blob: 'é'.repeat(8187) });
    assert.equal(wide.status, 400);

    const atLimit = await s.trigger({ blob: 'x'.repeat(16 * 1024 - 11) });
    assert.equal(atLimit.status, 200, JSON.stringify(atLimit.body));
    const [row] = await sendsOf(s.campaignId);
    assert.equal(Buffer.byteLength(row!.trigger_data!), 16 * 1024);
  });

  test(`nested deeper than ${MAX_JSON_DEPTH} levels: 400 naming the first object too deep, no send; ${MAX_JSON_DEPTH} levels are accepted`, async () => {
    const s = await setup();
    const deep = await s.triggerRaw(nestedObject(MAX_JSON_DEPTH + 1));
    assert.deepEqual(
      [deep.status, deep.body],
      [
        400,
        validation([
          {
            path: `/data${'/a'.repeat(MAX_JSON_DEPTH)}`,
            message: `is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays`,
          },
        ]),
      ],
    );
    assert.deepEqual(await sendsOf(s.campaignId), []);

    const ok = await s.triggerRaw(nestedObject(MAX_JSON_DEPTH));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(JSON.parse((await sendRow(t.db, ok.body.sendId)).trigger_data!), JSON.parse(nestedObject(MAX_JSON_DEPTH)));
  });

  test('the GET form takes no data: a `data` query parameter is tolerated and ignored', async () => {
    const s = await setup();
    await s.api.post('/api/leads', { email: s.email, name: 'Query Caller' });
    const res = await s.api.get(
      `/api/campaigns/trigger?campaignId=${s.campaignId}&lead=${encodeURIComponent(s.email)}&data=${encodeURIComponent('{"order":"A-1"}')}`,
    );
    assert.deepEqual([res.status, res.body.status], [200, 'queued']);
    assert.equal((await sendRow(t.db, res.body.sendId)).trigger_data, null);
    const [mail] = await eventually(() => mailsTo(s.email).length === 1 && mailsTo(s.email), 4000, 'the email');
    assert.equal(mail!.subject, 'Order  for Query Caller', 'trigger.* renders empty');
  });
});

describe('trigger data in the message', () => {
  test('email: subject, HTML and text render {{ trigger.* }} at the SMTP sink; the contact is not written', async () => {
    const s = await setup();
    const data = { order: 'A-42', link: 'https://shop.example/orders/A-42', total: 99.5, items: [{ sku: 'X1' }, { sku: 'Y2' }] };
    const res = await s.trigger(data);
    assert.deepEqual([res.status, res.body.status], [200, 'queued']);
    assert.deepEqual(JSON.parse((await sendRow(t.db, res.body.sendId)).trigger_data!), data, 'stored with the send');

    const [mail] = await eventually(() => mailsTo(s.email).length === 1 && mailsTo(s.email), 4000, 'the email');
    assert.equal(mail!.subject, 'Order A-42 for Katherine Johnson');
    assert.match(
      mail!.html ?? '',
      /<p>Order A-42: <a href="[^"]+\/t\/c\/[^"]+">track it<\/a> Y2<\/p>/,
      'the link is tracked like any other',
    );
    assert.match(mail!.text ?? '', /^Order A-42 \(99\.5\)/);
    const profile = await getContactProfile(t.db, s.accountId, { email: s.email });
    assert.deepEqual(profile?.metadata, {}, 'trigger data is not written onto the contact');
  });

  test('HTML bodies escape trigger data like contact data; text and subject keep it as plain text', async () => {
    const s = await setup({ html: '<p>{{ trigger.note }}</p>', text: '{{ trigger.note }}', subject: '{{ trigger.note }}' });
    const note = '<script>alert("x")</script> & <b>bold</b>';
    const res = await s.trigger({ note });
    const [mail] = await eventually(() => mailsTo(s.email).length === 1 && mailsTo(s.email), 4000, 'the email');
    assert.match(mail!.html ?? '', /<p>&lt;script&gt;alert\(&#34;x&#34;\)&lt;\/script&gt; &amp; &lt;b&gt;bold&lt;\/b&gt;<\/p>/);
    assert.ok(!(mail!.html ?? '').includes('<script>'), 'no markup from trigger data');
    assert.match(mail!.text ?? '', /^<script>alert\("x"\)<\/script> & <b>bold<\/b>/);
    assert.equal(mail!.subject, note);
    await sentRow(res.body.sendId);
  });

  test('WhatsApp: a template parameter from trigger data reaches the fake Cloud API', async () => {
    const s = await setup({}, 'pro');
    const phoneNumberId = `11${Date.now()}`;
    cloud.addPhoneNumber(phoneNumberId, 'EAAG-data-token');
    cloud.addTemplate('order_ready', 'en_US', 2);
    await updateAccount(t.db, t.config, s.accountId, { whatsapp: { phoneNumberId, token: 'EAAG-data-token' } });
    const { id: campaignId } = await makeWhatsappCampaign(t, s.accountId, {
      whatsappTemplate: 'order_ready',
      whatsappParams: ['{{ contact.name }}', 'order {{ trigger.order }} at {{ trigger.store.name }}'],
    });
    const phone = randomPhone();
    const res = await s.api.post('/api/campaigns/trigger', {
      campaignId,
      lead: { phone, name: 'Mary Jackson' },
      data: { order: 'W-7', store: { name: 'Main Street' } },
    });
    assert.deepEqual([res.status, res.body.status], [200, 'queued']);
    await sentRow(res.body.sendId);
    const request = cloud.accepted.find((r) => r.phoneNumberId === phoneNumberId);
    assert.ok(request, 'the Cloud API received the message');
    assert.deepEqual(request.body.template.components, [
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Mary Jackson' },
          { type: 'text', text: 'order W-7 at Main Street' },
        ],
      },
    ]);
    assert.deepEqual(cloud.unexpected, []);
  });
});

describe('trigger data in the webhook payload', () => {
  test('data.trigger carries the object, signed with the rest; a send without data has no data.trigger', async () => {
    const s = await setup({ webhooks: [receiver.url('/data')], reentry: true, cooldownDays: 0 });
    const data = { order: 'A-42', lines: [{ sku: 'X1', qty: 2 }], gift: false, note: null };
    const withData = await s.trigger(data);
    const without = await s.trigger();
    const payloadOf = async (sendId: string) => {
      const hook = await eventually(() => receiver.requests.find((r) => r.body.toString().includes(sendId)), 5000, `webhook of ${sendId}`);
      return new Webhook(s.webhookSecret).verify(hook.body.toString(), hook.headers as Record<string, string>) as {
        data: Record<string, unknown>;
      };
    };
    const first = await payloadOf(withData.body.sendId);
    assert.deepEqual(first.data.trigger, data);
    assert.deepEqual(Object.keys(first.data), ['campaignId', 'sendId', 'contact', 'trigger']);
    const second = await payloadOf(without.body.sendId);
    assert.deepEqual(Object.keys(second.data), ['campaignId', 'sendId', 'contact'], 'no trigger member when the call had no data');
  });
});

describe('a re-trigger that restarts a pending delayed send: the latest trigger wins', () => {
  test('its data replaces the pending send’s; a restart without data clears it; one message, with the last data', async () => {
    // 3 s: four calls in a row must all land before the send comes due, even on a loaded machine.
    const s = await setup({ mode: 'delay', delaySeconds: 3 });
    const first = await s.trigger({ order: 'FIRST', total: 1 });
    assert.deepEqual([first.status, first.body.status], [200, 'pending']);
    assert.deepEqual(JSON.parse((await sendRow(t.db, first.body.sendId)).trigger_data!), { order: 'FIRST', total: 1 });

    const second = await s.trigger({ order: 'SECOND' }, s.email);
    assert.deepEqual([second.body.status, second.body.sendId], ['pending', first.body.sendId]);
    assert.deepEqual(JSON.parse((await sendRow(t.db, first.body.sendId)).trigger_data!), { order: 'SECOND' }, 'replaced, not merged');

    const third = await s.trigger(undefined, s.email);
    assert.deepEqual([third.body.status, third.body.sendId], ['pending', first.body.sendId]);
    assert.equal((await sendRow(t.db, first.body.sendId)).trigger_data, null, 'a restart without data clears it');

    const fourth = await s.trigger({ order: 'LAST' }, s.email);
    assert.equal(fourth.body.sendId, first.body.sendId);
    const [mail] = await eventually(() => mailsTo(s.email).length === 1 && mailsTo(s.email), 8000, 'the one email');
    assert.equal(mail!.subject, 'Order LAST for Katherine Johnson');
    assert.match(mail!.text ?? '', /^Order LAST \(\)/, 'nothing left of the earlier calls (total was only in the first)');
    await sleep(300);
    assert.equal(mailsTo(s.email).length, 1, 'exactly one message');
    assert.equal((await sendsOf(s.campaignId)).length, 1, 'one send row');
  });
});

describe('trigger data in the outbox (no SMTP server configured)', () => {
  test('the kept message shows the rendered trigger data', async () => {
    const o = await startService({ ownDatabase: true });
    try {
      assert.equal(o.config.smtpUrl, undefined);
      const tenant = await makeTenant(o.db, o.config);
      const api = apiClient(o.app, tenant.key);
      const { id: campaignId } = await makeEmailCampaign(o, tenant.accountId, {
        subject: 'Reset for {{ contact.name }}',
        html: '<p>Code {{ trigger.code }}</p>',
        text: 'Code {{ trigger.code }}',
      });
      const res = await api.post('/api/campaigns/trigger', {
        campaignId,
        lead: { email: randomEmail(), name: 'Annie Easley' },
        data: { code: '314159' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const item = await eventually(async () => (await listOutbox(o.db, tenant.accountId)).items[0], 4000, 'the outbox message');
      assert.equal(item.sendId, res.body.sendId);
      assert.match(item.html ?? '', /<p>Code 314159<\/p>/);
      assert.match(item.text ?? '', /^Code 314159/);
    } finally {
      await o.close();
    }
  });
});
