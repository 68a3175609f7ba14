import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/ids.js';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { triggerCampaign } from '../../src/modules/sends/trigger.service.js';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import { randomEmail, randomPhone } from '../helpers/factories.js';
import { eventually, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';
import { assertError, signedIn } from './helpers.js';

/** docs/admin-api.md, Campaigns: CRUD, stats, preview, test-send and webhook deliveries, with the real dispatcher. */

let t: TestHerald;
let receiver: WebhookReceiver;
before(async () => {
  t = await startTestHerald();
  receiver = await WebhookReceiver.start();
});
after(async () => {
  await t.close();
  await receiver.close();
});

const complete = {
  from: 'Acme <news@acme.test>',
  subject: 'Hello {{ contact.name }}',
  html: '<p>Hi {{ contact.name }}, from {{ contact.fields.city }}</p>',
  text: 'Hi {{ contact.name }}',
};
const contact = (accountId: string, lead: Parameters<typeof writeContact>[2] = {}) =>
  writeContact(t.db, accountId, { email: randomEmail(), name: 'Ada Lovelace', ...lead }).then((r) => r.id);
const outboxOf = (sendId: string) => t.db.kysely.selectFrom('outbox_messages').selectAll().where('send_id', '=', sendId).executeTakeFirst();

describe('campaign settings', () => {
  test('create → {id, webhookSecret}; GET and the list answer the Campaign shape', async () => {
    const { panel } = await signedIn(t);
    const created = await panel.post('/campaigns', { name: 'Welcome', channel: 'email', ...complete, active: true });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.match(created.body.id, /^cmp_/);
    assert.match(created.body.webhookSecret, /^whsec_/);
    const got = await panel.get(`/campaigns/${created.body.id}`);
    assert.deepEqual(Object.keys(got.body).sort(), [
      'active',
      'channel',
      'cooldownDays',
      'createdAt',
      'delaySeconds',
      'email',
      'id',
      'mode',
      'name',
      'reentry',
      'schedule',
      'updatedAt',
      'webhooks',
      'whatsapp',
    ]);
    assert.deepEqual(
      [got.body.active, got.body.schedule, got.body.mode, got.body.email.subject],
      [true, 'api', 'immediate', complete.subject],
    );
    assert.deepEqual((await panel.get('/campaigns')).body.items, [got.body]);
  });

  test('PATCH applies the members given and answers the Campaign', async () => {
    const { panel } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'Draft', channel: 'email' })).body;
    const res = await panel.patch(`/campaigns/${id}`, { ...complete, mode: 'delay', delaySeconds: 60, name: 'Renamed' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      [res.body.name, res.body.mode, res.body.delaySeconds, res.body.email.from, res.body.active],
      ['Renamed', 'delay', 60, complete.from, false],
    );
  });

  test('activation refusals are 400 at /active: incomplete settings, WhatsApp on the free plan', async () => {
    const { panel } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'Draft', channel: 'email' })).body;
    assertError(await panel.patch(`/campaigns/${id}`, { active: true }), 400, 'Validation Error', '/active');
    const wa = await panel.post('/campaigns', { name: 'WA', channel: 'whatsapp', whatsappTemplate: 'hello', language: 'en' });
    assertError(await panel.patch(`/campaigns/${wa.body.id}`, { active: true }), 400, 'Validation Error', '/active');
    assert.equal((await panel.get(`/campaigns/${id}`)).body.active, false);
  });

  test('validation: unknown channel, wrong types, unknown members, missing name', async () => {
    const { panel } = await signedIn(t);
    assertError(await panel.post('/campaigns', { name: 'x', channel: 'sms' }), 400, 'Validation Error', '/channel');
    assertError(await panel.post('/campaigns', { channel: 'email' }), 400, 'Validation Error', '/name');
    assertError(
      await panel.post('/campaigns', { name: 'x', channel: 'email', delaySeconds: '60' }),
      400,
      'Validation Error',
      '/delaySeconds',
    );
    assertError(await panel.post('/campaigns', { name: 'x', channel: 'email', colour: 'red' }), 400, 'Validation Error', '/colour');
    assertError(await panel.post('/campaigns', { name: 'x', channel: 'email', html: '{% if %}' }), 400, 'Validation Error', '/html');
    assertError(await panel.patch(`/campaigns/${newId('cmp')}`, { name: 'x' }), 404, 'Campaign not found');
  });
});

describe('preview', () => {
  test('email: rendered for the contact with the unsaved edits; nothing is stored or sent', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'P', channel: 'email', ...complete })).body;
    await panel.post('/fields', { name: 'City', type: 'location' });
    const contactId = await contact(accountId, { fields: [{ key: 'city', value: 'Paris' }] });
    const saved = await panel.post(`/campaigns/${id}/preview`, { contactId });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal(saved.body.subject, 'Hello Ada Lovelace');
    assert.match(saved.body.html, /Hi Ada Lovelace, from Paris/);
    assert.match(saved.body.text, /^Hi Ada Lovelace/);
    const edited = await panel.post(`/campaigns/${id}/preview`, {
      contactId,
      campaign: { subject: 'Unsaved {{ contact.name }}!', html: '<b>{{ contact.email }}</b>' },
    });
    assert.equal(edited.body.subject, 'Unsaved Ada Lovelace!');
    assert.match(edited.body.html, /^<b>user[0-9a-f]+@example\.com<\/b>/);
    assert.equal((await panel.get(`/campaigns/${id}`)).body.email.subject, complete.subject, 'the edits are not saved');
    const sends = await t.db.kysely.selectFrom('sends').select('id').where('campaign_id', '=', id).execute();
    assert.deepEqual(sends, [], 'nothing sent');
  });

  test('a draft without a sender can be previewed; one without a body cannot (400)', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'Draft', channel: 'email', subject: 'Hi' })).body;
    const contactId = await contact(accountId);
    assertError(await panel.post(`/campaigns/${id}/preview`, { contactId }), 400, 'Validation Error', '/campaign/html');
    const res = await panel.post(`/campaigns/${id}/preview`, { contactId, campaign: { text: 'Plain {{ contact.name }}' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual([res.body.subject, res.body.html], ['Hi', null]);
    assert.match(res.body.text, /^Plain Ada Lovelace/);
  });

  test('WhatsApp: template, language and the rendered parameters', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (
      await panel.post('/campaigns', {
        name: 'WA',
        channel: 'whatsapp',
        whatsappTemplate: 'reminder',
        language: 'en_US',
        whatsappParams: ['{{ contact.name }}', 'tomorrow'],
      })
    ).body;
    const contactId = await contact(accountId, { phone: randomPhone() });
    const res = await panel.post(`/campaigns/${id}/preview`, { contactId });
    assert.deepEqual(res.body, { template: 'reminder', language: 'en_US', params: ['Ada Lovelace', 'tomorrow'] });
  });

  test('preview errors: bad template in an edit (path under /campaign), unknown contact or campaign', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'P', channel: 'email', ...complete })).body;
    const contactId = await contact(accountId);
    assertError(
      await panel.post(`/campaigns/${id}/preview`, { contactId, campaign: { html: '{% if %}' } }),
      400,
      'Validation Error',
      '/campaign/html',
    );
    assertError(
      await panel.post(`/campaigns/${id}/preview`, { contactId, campaign: { colour: 'red' } }),
      400,
      'Validation Error',
      '/campaign/colour',
    );
    assertError(await panel.post(`/campaigns/${id}/preview`, {}), 400, 'Validation Error', '/contactId');
    assertError(await panel.post(`/campaigns/${id}/preview`, { contactId: newId('ld') }), 404, 'Lead not found');
    assertError(await panel.post(`/campaigns/${newId('cmp')}/preview`, { contactId }), 404, 'Campaign not found');
  });
});

describe('test send', () => {
  test('delivered through the channel (outbox), marked test, outside statistics, allowance and re-entry, no webhooks', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (
      await panel.post('/campaigns', { name: 'T', channel: 'email', ...complete, active: true, webhooks: [receiver.url('/test-send')] })
    ).body;
    const contactId = await contact(accountId);
    const res = await panel.post(`/campaigns/${id}/test-send`, { contactId });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.sendId, /^snd_/);
    const row = await eventually(
      async () => {
        const send = await sendRow(t.db, res.body.sendId);
        return send.status === 'sent' ? send : undefined;
      },
      5000,
      'the test send sent',
    );
    assert.equal(row.test, 1);
    assert.equal((await outboxOf(res.body.sendId))?.subject, '[Test] Hello Ada Lovelace', 'a test says so before its subject');

    const stats = (await panel.get(`/campaigns/${id}/stats`)).body;
    assert.equal(stats.totals.sent, 0, 'not in the totals');
    assert.equal(stats.totals.processed, 0);
    assert.ok(
      stats.days.every((d: { sent: number }) => d.sent === 0),
      'not in the days',
    );
    assert.equal((await panel.get('/account')).body.usedThisMonth, 0, 'not counted against the allowance');
    const deliveries = await t.db.kysely.selectFrom('webhook_deliveries').select('id').where('send_id', '=', res.body.sendId).execute();
    assert.deepEqual(deliveries, [], 'the customer webhooks are not called for a test');

    // Re-entry is off, yet the contact has not "received" the campaign: a real trigger still queues.
    const real = await triggerCampaign({ db: t.db }, accountId, { campaignId: id, lead: contactId });
    assert.equal(real.status, 'queued');
  });

  test('works on a campaign that is not active (trying a draft)', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'Draft', channel: 'email', ...complete })).body;
    const res = await panel.post(`/campaigns/${id}/test-send`, { contactId: await contact(accountId) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await eventually(async () => (await sendRow(t.db, res.body.sendId)).status === 'sent', 5000, 'the test send sent');
    assert.ok(await outboxOf(res.body.sendId));
  });

  test('refused: incomplete campaign, contact without an email, opted-out contact, unknown contact', async () => {
    const { panel, accountId } = await signedIn(t);
    const draft = (await panel.post('/campaigns', { name: 'Draft', channel: 'email', subject: 'x' })).body.id;
    const { id } = (await panel.post('/campaigns', { name: 'T', channel: 'email', ...complete })).body;
    const withEmail = await contact(accountId);
    assertError(await panel.post(`/campaigns/${draft}/test-send`, { contactId: withEmail }), 400, 'Validation Error', '/campaign');
    const phoneOnly = (await writeContact(t.db, accountId, { phone: randomPhone(), name: 'No Mail' })).id;
    assertError(await panel.post(`/campaigns/${id}/test-send`, { contactId: phoneOnly }), 400, 'Validation Error', '/contactId');
    await panel.patch(`/contacts/${withEmail}`, { optedOut: true });
    assertError(await panel.post(`/campaigns/${id}/test-send`, { contactId: withEmail }), 400, 'Validation Error', '/contactId');
    assertError(await panel.post(`/campaigns/${id}/test-send`, { contactId: newId('ld') }), 404, 'Lead not found');
    const sends = await t.db.kysely.selectFrom('sends').select('id').where('account_id', '=', accountId).execute();
    assert.deepEqual(sends, [], 'no send row for any refusal');
  });
});

describe('statistics', () => {
  test('totals and one entry per day (30 by default, ?days=N), real sends only', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'S', channel: 'email', ...complete, active: true, reentry: true })).body;
    const contactId = await contact(accountId);
    const { sendId } = await triggerCampaign({ db: t.db }, accountId, { campaignId: id, lead: contactId });
    await eventually(async () => (await sendRow(t.db, sendId!)).status === 'sent', 5000, 'the real send');
    const stats = await panel.get(`/campaigns/${id}/stats`);
    assert.equal(stats.status, 200);
    assert.deepEqual([stats.body.totals.sent, stats.body.totals.processed, stats.body.totals.delivered], [1, 1, 1]);
    assert.equal(stats.body.days.length, 30);
    const today = stats.body.days[29];
    assert.equal(today.date, new Date().toISOString().slice(0, 10));
    assert.deepEqual([today.sent, today.processed, today.delivered, today.opens, today.clicks], [1, 1, 1, 0, 0]);
    assert.equal((await panel.get(`/campaigns/${id}/stats?days=7`)).body.days.length, 7);
    assertError(await panel.get(`/campaigns/${id}/stats?days=0`), 400, 'Validation Error', '/days');
    assertError(await panel.get(`/campaigns/${newId('cmp')}/stats`), 404, 'Campaign not found');
  });
});

describe('webhook deliveries and the outbox', () => {
  test('a real send: its webhook delivery with attempts {at, statusCode, error, durationMs}; the email in the outbox', async () => {
    const { panel, accountId } = await signedIn(t);
    const url = receiver.url('/deliveries');
    const { id } = (await panel.post('/campaigns', { name: 'W', channel: 'email', ...complete, active: true, webhooks: [url] })).body;
    const { sendId } = await triggerCampaign({ db: t.db }, accountId, { campaignId: id, lead: await contact(accountId) });
    const items = await eventually(
      async () => {
        const res = await panel.get(`/campaigns/${id}/webhook-deliveries`);
        return res.body.items?.[0]?.status === 'delivered' ? res.body.items : undefined;
      },
      8000,
      'the webhook delivered',
    );
    assert.equal(items.length, 1);
    assert.equal(items[0].url, url);
    assert.equal(items[0].sendId, sendId);
    assert.match(items[0].messageId, /^msg_/);
    assert.equal(items[0].attempts.length, 1);
    assert.deepEqual(Object.keys(items[0].attempts[0]).sort(), ['at', 'durationMs', 'error', 'statusCode']);
    assert.equal(items[0].attempts[0].statusCode, 200);
    assertError(await panel.get(`/campaigns/${newId('cmp')}/webhook-deliveries`), 404, 'Campaign not found');

    const outbox = await panel.get(`/outbox?campaignId=${id}`);
    assert.equal(outbox.body.items.length, 1);
    const item = outbox.body.items[0];
    assert.deepEqual(Object.keys(item).sort(), ['campaignId', 'channel', 'createdAt', 'from', 'id', 'sendId', 'subject', 'to']);
    assert.deepEqual([item.sendId, item.channel, item.from, item.subject], [sendId, 'email', complete.from, 'Hello Ada Lovelace']);
    const detail = await panel.get(`/outbox/${item.id}`);
    assert.equal(detail.status, 200);
    assert.match(detail.body.html, /Hi Ada Lovelace/);
    assert.match(detail.body.text, /Hi Ada Lovelace/);
    assert.ok(detail.body.headers['List-Unsubscribe']);
    assert.equal(detail.body.payload, null);
    assertError(await panel.get(`/outbox/${newId('obx')}`), 404, 'Message not found');
  });

  test('outbox paging: newest first, every message once', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'O', channel: 'email', ...complete })).body;
    const sendIds: string[] = [];
    for (let i = 0; i < 5; i++)
      sendIds.push((await panel.post(`/campaigns/${id}/test-send`, { contactId: await contact(accountId) })).body.sendId);
    await eventually(async () => (await Promise.all(sendIds.map(outboxOf))).every(Boolean), 5000, 'five messages');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { items: { sendId: string }[]; nextCursor: string | null } } = await panel.get(
        `/outbox?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...res.body.items.map((m) => m.sendId));
      cursor = res.body.nextCursor;
    } while (cursor);
    assert.deepEqual([...seen].sort(), [...sendIds].sort());
    assert.equal(new Set(seen).size, 5);
    assertError(await panel.get('/outbox?limit=500'), 400, 'Validation Error', '/limit');
  });
});
