import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { updateAccount } from '../../src/modules/accounts/accounts.service.js';
import { listActivity } from '../../src/modules/activity/activity.service.js';
import { createCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { FakeWhatsAppCloudApi } from '../fakes/whatsapp-cloud-api.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomPhone, uniq } from '../helpers/factories.js';
import { eventually, sendRow } from '../helpers/herald.js';
import { engagementsOf, type RunningHerald, startRunningHerald, stats } from './helpers.js';

/**
 * The Cloud API's callbacks, shaped as Meta sends them, over real HTTP: the verification
 * handshake, signed status updates (delivered, read, failed) for messages Herald sent through
 * the (fake) Cloud API, and a STOP reply.
 */
let t: RunningHerald;
let cloud: FakeWhatsAppCloudApi;
before(async () => {
  cloud = await FakeWhatsAppCloudApi.start();
  cloud.addTemplate('hello', 'en', 0);
  t = await startRunningHerald({ WHATSAPP_API_URL: cloud.url });
});
after(async () => {
  await t.close();
  await cloud.close();
});

/** A pro account with WhatsApp configured (phone number id, token, app secret, verify token) and an active campaign. */
async function whatsappTenant() {
  const tenant = await makeTenant(t.db, t.config, { plan: 'pro' });
  const phoneNumberId = String(1e14 + Math.floor(Math.random() * 1e13));
  const appSecret = uniq('app-secret-');
  const verifyToken = uniq('verify-');
  cloud.addPhoneNumber(phoneNumberId, 'EAAG-token');
  await updateAccount(t.db, t.config, tenant.accountId, {
    whatsapp: { phoneNumberId, token: 'EAAG-token', appSecret },
    whatsappVerifyToken: verifyToken,
  });
  const { id: campaignId } = await createCampaign(t.db, t.config, tenant.accountId, {
    name: 'WA',
    channel: 'whatsapp',
    whatsappTemplate: 'hello',
    language: 'en',
    active: true,
  });
  return { ...tenant, phoneNumberId, appSecret, verifyToken, campaignId, api: apiClient(t.app, tenant.key) };
}

type Tenant = Awaited<ReturnType<typeof whatsappTenant>>;

/** Triggers the campaign for a new contact and waits until the Cloud API accepted it (the send holds its wamid). */
async function sentMessage(tenant: Tenant, phone = randomPhone()) {
  const res = await tenant.api.post('/api/campaigns/trigger', { campaignId: tenant.campaignId, lead: { phone, name: 'Grace Hopper' } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const row = await eventually(
    async () => {
      const r = await sendRow(t.db, res.body.sendId);
      return r.status === 'sent' && r;
    },
    5000,
    'the WhatsApp send',
  );
  assert.match(row.provider_message_id ?? '', /^wamid\./);
  return { sendId: row.id, leadId: res.body.leadId as string, phone, wamid: row.provider_message_id! };
}

const seconds = () => String(Math.floor(Date.now() / 1000));

/** A webhook body as the Cloud API posts it, for one phone number id. */
function payload(phoneNumberId: string, value: { statuses?: object[]; messages?: object[]; contacts?: object[] }) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              ...value,
            },
          },
        ],
      },
    ],
  };
}

const status = (wamid: string, name: string, phone: string, extra: object = {}) => ({
  id: wamid,
  status: name,
  timestamp: seconds(),
  recipient_id: phone.slice(1),
  ...(name === 'failed'
    ? {}
    : {
        conversation: { id: 'c0ffee', origin: { type: 'marketing' } },
        pricing: { billable: true, pricing_model: 'CBP', category: 'marketing' },
      }),
  ...extra,
});

const textMessage = (phone: string, body: string) => ({
  contacts: [{ profile: { name: 'Grace' }, wa_id: phone.slice(1) }],
  messages: [{ from: phone.slice(1), id: `wamid.${uniq()}`, timestamp: seconds(), type: 'text', text: { body } }],
});

const lastDigitChanged = (signature: string) => signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');
const sign = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** POSTs the body (as exact bytes) with the signature of `secret` (or the given header). */
async function callback(body: object | string, signature: string | undefined) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== undefined) headers['x-hub-signature-256'] = signature;
  return fetch(`${t.base}/whatsapp/webhook`, { method: 'POST', headers, body: text });
}

async function signedCallback(tenant: Tenant, body: object) {
  const text = JSON.stringify(body);
  const res = await callback(text, sign(text, tenant.appSecret));
  assert.equal(res.status, 200, await res.clone().text());
  return res;
}

describe('webhook verification handshake', () => {
  const handshake = (query: Record<string, string>) => fetch(`${t.base}/whatsapp/webhook?${new URLSearchParams(query)}`);

  test("answers the challenge as text when the verify token is an account's", async () => {
    const tenant = await whatsappTenant();
    const res = await handshake({ 'hub.mode': 'subscribe', 'hub.verify_token': tenant.verifyToken, 'hub.challenge': '1158201444' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await res.text(), '1158201444');
  });

  test('refuses (403) a wrong token, another mode, or a missing challenge', async () => {
    const tenant = await whatsappTenant();
    for (const query of [
      { 'hub.mode': 'subscribe', 'hub.verify_token': `${tenant.verifyToken}x`, 'hub.challenge': '1' },
      { 'hub.mode': 'unsubscribe', 'hub.verify_token': tenant.verifyToken, 'hub.challenge': '1' },
      { 'hub.mode': 'subscribe', 'hub.verify_token': tenant.verifyToken },
      { 'hub.mode': 'subscribe', 'hub.challenge': '1' },
    ] as Record<string, string>[]) {
      const res = await handshake(query);
      assert.equal(res.status, 403, JSON.stringify(query));
      assert.ok(!(await res.text()).includes('1158201444'));
    }
  });
});

describe('status updates', () => {
  test('delivered sets the send delivered, once; statistics count it', async () => {
    const tenant = await whatsappTenant();
    const sent = await sentMessage(tenant);
    assert.equal((await sendRow(t.db, sent.sendId)).delivered_at, null);
    await signedCallback(tenant, payload(tenant.phoneNumberId, { statuses: [status(sent.wamid, 'delivered', sent.phone)] }));
    const first = (await sendRow(t.db, sent.sendId)).delivered_at;
    assert.ok(first !== null && Math.abs(Number(first) - Date.now()) < 5000, String(first));
    await new Promise((r) => setTimeout(r, 1100));
    await signedCallback(tenant, payload(tenant.phoneNumberId, { statuses: [status(sent.wamid, 'delivered', sent.phone)] }));
    assert.equal((await sendRow(t.db, sent.sendId)).delivered_at, first, 'a repeated receipt keeps the first time');
    const s = await stats(t, tenant.accountId, tenant.campaignId);
    assert.deepEqual([s.sent, s.delivered], [1, 1]);
  });

  test('read counts one open per send (also when repeated) and implies delivered; the open shows in the feed', async () => {
    const tenant = await whatsappTenant();
    const sent = await sentMessage(tenant);
    for (let i = 0; i < 2; i++)
      await signedCallback(tenant, payload(tenant.phoneNumberId, { statuses: [status(sent.wamid, 'read', sent.phone)] }));
    assert.notEqual((await sendRow(t.db, sent.sendId)).delivered_at, null);
    assert.deepEqual(await engagementsOf(t, sent.sendId), [{ kind: 'open', url: null }]);
    const s = await stats(t, tenant.accountId, tenant.campaignId);
    assert.deepEqual([s.delivered, s.opens, s.uniqueOpens], [1, 1, 1]);
    const { items } = await listActivity(t.db, tenant.accountId, sent.leadId);
    assert.deepEqual(
      items.filter((i) => i.kind === 'open').map((i) => ({ ...i, at: undefined })),
      [{ kind: 'open', at: undefined, sendId: sent.sendId, campaignId: tenant.campaignId }],
    );
  });

  test("failed ends the send in error with the API's error title as reason", async () => {
    const tenant = await whatsappTenant();
    const sent = await sentMessage(tenant);
    const errors = [
      { code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message Undeliverable.' } },
    ];
    await signedCallback(tenant, payload(tenant.phoneNumberId, { statuses: [status(sent.wamid, 'failed', sent.phone, { errors })] }));
    const row = await sendRow(t.db, sent.sendId);
    assert.deepEqual([row.status, row.reason], ['error', 'Message undeliverable']);
    const s = await stats(t, tenant.accountId, tenant.campaignId);
    assert.deepEqual([s.sent, s.error], [0, 1]);
  });

  test('several statuses in one callback are all applied; a wamid Herald did not send is ignored', async () => {
    const tenant = await whatsappTenant();
    const [a, b] = [await sentMessage(tenant), await sentMessage(tenant)];
    await signedCallback(
      tenant,
      payload(tenant.phoneNumberId, {
        statuses: [status(a.wamid, 'delivered', a.phone), status(b.wamid, 'read', b.phone), status('wamid.not-ours', 'read', a.phone)],
      }),
    );
    const s = await stats(t, tenant.accountId, tenant.campaignId);
    assert.deepEqual([s.delivered, s.opens], [2, 1]);
  });
});

describe('signatures', () => {
  test('a missing, malformed or wrong signature, or an altered body, is refused (401) and changes nothing', async () => {
    const tenant = await whatsappTenant();
    const sent = await sentMessage(tenant);
    const body = JSON.stringify(
      payload(tenant.phoneNumberId, { statuses: [status(sent.wamid, 'read', sent.phone)], ...textMessage(sent.phone, 'STOP') }),
    );
    const altered = body.replace('"read"', '"delivered"');
    for (const [text, signature] of [
      [body, undefined],
      [body, 'sha1=abc'],
      [body, sign(body, 'wrong-secret')],
      [body, lastDigitChanged(sign(body, tenant.appSecret))],
      [altered, sign(body, tenant.appSecret)],
    ] as [string, string | undefined][]) {
      const res = await callback(text, signature);
      assert.equal(res.status, 401, `${signature} answered ${res.status}`);
      assert.equal((await res.json()).message, 'Invalid signature');
    }
    const row = await sendRow(t.db, sent.sendId);
    assert.deepEqual([row.status, row.delivered_at], ['sent', null]);
    assert.deepEqual(await engagementsOf(t, sent.sendId), []);
    assert.equal((await getContactProfile(t.db, tenant.accountId, { id: sent.leadId }))!.optedOut, false);
  });

  test("one account's app secret cannot sign changes for another account's phone number", async () => {
    const victim = await whatsappTenant();
    const attacker = await whatsappTenant();
    const sent = await sentMessage(victim);
    const own = await sentMessage(attacker);
    const body = {
      object: 'whatsapp_business_account',
      entry: [
        ...payload(victim.phoneNumberId, {
          statuses: [status(sent.wamid, 'failed', sent.phone, { errors: [{ code: 1, title: 'forged' }] })],
          ...textMessage(sent.phone, 'STOP'),
        }).entry,
        ...payload(attacker.phoneNumberId, { statuses: [status(own.wamid, 'delivered', own.phone)] }).entry,
      ],
    };
    // Signed with the attacker's own secret: only the attacker's own change applies.
    await signedCallback(attacker, body);
    assert.equal((await sendRow(t.db, sent.sendId)).status, 'sent');
    assert.equal((await getContactProfile(t.db, victim.accountId, { id: sent.leadId }))!.optedOut, false);
    assert.notEqual((await sendRow(t.db, own.sendId)).delivered_at, null);
    // Naming only the victim, it is refused outright.
    const victimOnly = JSON.stringify(payload(victim.phoneNumberId, { statuses: [status(sent.wamid, 'read', sent.phone)] }));
    assert.equal((await callback(victimOnly, sign(victimOnly, attacker.appSecret))).status, 401);
    assert.deepEqual(await engagementsOf(t, sent.sendId), []);
  });
});

describe('STOP replies', () => {
  test('a contact who replies STOP is opted out, and the next trigger for them ends as Optout', async () => {
    const tenant = await whatsappTenant();
    const sent = await sentMessage(tenant);
    await signedCallback(tenant, payload(tenant.phoneNumberId, textMessage(sent.phone, 'STOP')));
    assert.equal((await getContactProfile(t.db, tenant.accountId, { id: sent.leadId }))!.optedOut, true);
    const again = await tenant.api.post('/api/campaigns/trigger', { campaignId: tenant.campaignId, lead: sent.phone });
    assert.deepEqual([again.status, again.body.status], [200, 'optout']);
  });

  test('STOP in any case, with spaces or a full stop, and the "Stop promotions" button, all opt out', async () => {
    const tenant = await whatsappTenant();
    for (const body of ['stop', 'Stop', '  STOP  ', 'Stop.', 'sToP!']) {
      const sent = await sentMessage(tenant);
      await signedCallback(tenant, payload(tenant.phoneNumberId, textMessage(sent.phone, body)));
      assert.equal((await getContactProfile(t.db, tenant.accountId, { id: sent.leadId }))!.optedOut, true, JSON.stringify(body));
    }
    const sent = await sentMessage(tenant);
    const button = {
      from: sent.phone.slice(1),
      id: `wamid.${uniq()}`,
      timestamp: seconds(),
      type: 'button',
      button: { payload: 'Stop promotions', text: 'Stop promotions' },
    };
    await signedCallback(tenant, payload(tenant.phoneNumberId, { messages: [button] }));
    assert.equal((await getContactProfile(t.db, tenant.accountId, { id: sent.leadId }))!.optedOut, true);
  });

  test('other replies opt nobody out, and a STOP from an unknown number changes nothing', async () => {
    const tenant = await whatsappTenant();
    const sent = await sentMessage(tenant);
    for (const body of ["Please don't stop", 'stop sending me the blue ones', 'Thanks!', 'STOPP']) {
      await signedCallback(tenant, payload(tenant.phoneNumberId, textMessage(sent.phone, body)));
    }
    await signedCallback(tenant, payload(tenant.phoneNumberId, textMessage(randomPhone(), 'STOP')));
    assert.equal((await getContactProfile(t.db, tenant.accountId, { id: sent.leadId }))!.optedOut, false);
  });
});
