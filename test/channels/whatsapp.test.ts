import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DeliveryError } from '../../src/channels/channel.js';
import { type Channels, createChannels, listOutbox } from '../../src/channels/transports.js';
import { createWhatsAppCloudTransport } from '../../src/channels/whatsapp/cloud-api.js';
import { FakeWhatsAppCloudApi } from '../fakes/whatsapp-cloud-api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { uniq } from '../helpers/factories.js';
import { captureLogger } from '../helpers/harness.js';
import { insertCampaign, makeDelivery, makeRichContact, rejection } from './helpers.js';

/** The Cloud API channel against a local fake that checks requests like the real API. */
let t: TestApp;
let api: FakeWhatsAppCloudApi;
let channels: Channels;
const log = captureLogger({ raw: true });

before(async () => {
  api = await FakeWhatsAppCloudApi.start();
  t = await startTestApp({ WHATSAPP_API_URL: api.url });
  channels = createChannels(t.config, t.db, log.logger);
});
afterEach(() => assert.deepEqual(api.unexpected, [], 'no request outside the Cloud API paths'));
after(async () => {
  await channels.close();
  await api.close();
  await t.close();
});

/** A pro account's WhatsApp campaign (template `order_update` in en_US with 2 body parameters). */
async function whatsappDelivery(options: { params?: string[]; credentials?: boolean } = {}) {
  const rich = await makeRichContact(t, { plan: 'pro' });
  const phoneNumberId = String(100000 + Math.floor(Math.random() * 900000));
  const token = `EAAG${uniq('tok')}`;
  api.addPhoneNumber(phoneNumberId, token);
  api.addTemplate('order_update', 'en_US', 2);
  const campaign = await insertCampaign(t, rich.accountId, {
    channel: 'whatsapp',
    whatsappTemplate: 'order_update',
    language: 'en_US',
    whatsappParams: options.params ?? ['{{ contact.name }}', '{{ contact.fields.city }} / {{ contact.kpis.orders }}'],
  });
  const request = await makeDelivery(t.db, campaign, rich.contact, {
    whatsapp: options.credentials === false ? null : { phoneNumberId, token },
  });
  return { request, phoneNumberId, token, rich };
}

describe('WhatsApp Cloud API channel', () => {
  test('sends the template message the Cloud API expects, with the rendered parameters', async () => {
    const { request, phoneNumberId, token, rich } = await whatsappDelivery();
    const receipt = await channels.whatsapp.deliver(request);
    const sent = api.accepted.find((r) => r.phoneNumberId === phoneNumberId);
    assert.ok(sent, 'the fake accepted the request');
    assert.equal(sent.headers.authorization, `Bearer ${token}`);
    assert.match(String(sent.headers['content-type']), /^application\/json/);
    assert.deepEqual(sent.body, {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: rich.phone.slice(1),
      type: 'template',
      template: {
        name: 'order_update',
        language: { code: 'en_US' },
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ada Lovelace' },
              { type: 'text', text: 'Lyon / 3' },
            ],
          },
        ],
      },
    });
    // Accepted, not yet delivered: the status callback says that later.
    assert.deepEqual(receipt, { providerMessageId: sent.wamid, delivered: false });
    assert.match(receipt.providerMessageId!, /^wamid\./);
  });

  test('a template without parameters is sent without components', async () => {
    const { request, phoneNumberId } = await whatsappDelivery({ params: [] });
    api.addTemplate('order_update', 'en_US', 0);
    try {
      await channels.whatsapp.deliver(request);
    } finally {
      api.addTemplate('order_update', 'en_US', 2);
    }
    const sent = api.accepted.find((r) => r.phoneNumberId === phoneNumberId);
    assert.ok(sent);
    assert.equal('components' in sent.body.template, false);
  });

  for (const [status, code] of [
    [500, 1],
    [503, 2],
    [429, 4],
    [400, 130429],
    [400, 131056],
    [400, 131048],
  ] as const) {
    test(`HTTP ${status} with error ${code} is a temporary failure`, async () => {
      const { request } = await whatsappDelivery();
      api.failNext(1, status, code);
      const err = await rejection(channels.whatsapp.deliver(request));
      assert.ok(err instanceof DeliveryError);
      assert.equal(err.temporary, true, err.message);
    });
  }

  for (const [status, code, message] of [
    [400, 132000, '(#132000) Number of parameters does not match the expected number of params'],
    [400, 131026, '(#131026) Message undeliverable'],
    [400, 100, '(#100) Invalid parameter'],
  ] as const) {
    test(`HTTP ${status} with error ${code} is a permanent failure carrying the API's message`, async () => {
      const { request } = await whatsappDelivery();
      api.failNext(1, status, code, message);
      const err = await rejection(channels.whatsapp.deliver(request));
      assert.ok(err instanceof DeliveryError);
      assert.equal(err.temporary, false);
      assert.ok(err.message.includes(String(code)) && err.message.includes(message), err.message);
    });
  }

  test('a parameter count the template does not have is refused by the API (132000): permanent', async () => {
    const { request } = await whatsappDelivery({ params: ['{{ contact.name }}'] });
    const err = await rejection(channels.whatsapp.deliver(request));
    assert.equal(err.temporary, false);
    assert.match(err.message, /132000/);
  });

  test('a wrong access token is refused (190): permanent, and the token is in no reason and no log', async () => {
    const { request } = await whatsappDelivery();
    const wrong = {
      ...request,
      account: { ...request.account, whatsapp: { ...request.account.whatsapp!, token: 'EAAG-wrong-token-secret' } },
    };
    const err = await rejection(channels.whatsapp.deliver(wrong));
    assert.equal(err.temporary, false);
    assert.match(err.message, /190/);
    assert.ok(!err.message.includes('EAAG-wrong-token-secret'));
    assert.ok(!log.lines.join('\n').includes('EAAG'), 'no access token in the logs');
  });

  test('an API that does not answer in time is a temporary failure', async () => {
    const { request } = await whatsappDelivery();
    const quick = createWhatsAppCloudTransport(t.config, log.logger, { timeoutMs: 200 });
    api.stallNext(1);
    const err = await rejection(quick.deliver(request));
    assert.equal(err.temporary, true);
    assert.match(err.message, /did not answer/);
  });

  test('an API that cannot be reached is a temporary failure', async () => {
    const { request } = await whatsappDelivery();
    const nowhere = createWhatsAppCloudTransport({ ...t.config, whatsappApiUrl: 'http://127.0.0.1:1/v21.0' }, log.logger);
    const err = await rejection(nowhere.deliver(request));
    assert.equal(err.temporary, true);
    assert.match(err.message, /unreachable/);
  });

  test('without account credentials the message goes to the outbox, exactly as it would have been sent', async () => {
    const { request, rich } = await whatsappDelivery({ credentials: false });
    const before = api.requests.length;
    const receipt = await channels.whatsapp.deliver(request);
    assert.equal(api.requests.length, before, 'nothing reached the Cloud API');
    assert.equal(receipt.delivered, true);
    assert.match(receipt.providerMessageId!, /^obx_/);
    const { items } = await listOutbox(t.db, request.account.id);
    assert.equal(items.length, 1);
    assert.equal(items[0]!.id, receipt.providerMessageId);
    assert.equal(items[0]!.channel, 'whatsapp');
    assert.equal(items[0]!.to, rich.phone);
    assert.deepEqual(items[0]!.payload, {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: rich.phone.slice(1),
      type: 'template',
      template: {
        name: 'order_update',
        language: { code: 'en_US' },
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ada Lovelace' },
              { type: 'text', text: 'Lyon / 3' },
            ],
          },
        ],
      },
    });
  });
});
