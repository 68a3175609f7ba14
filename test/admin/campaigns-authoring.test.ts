import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { randomEmail, randomPhone } from '../helpers/factories.js';
import { eventually, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';
import { assertError, signedIn } from './helpers.js';

/**
 * Issue 13, Authoring, in the admin API: the preview of a campaign not saved yet, Liquid errors
 * in words at the field that has them, and a test send to an address of one's choice that
 * reaches a real SMTP server marked as a test.
 */
let t: TestHerald;
let sink: SmtpSink;
before(async () => {
  sink = await SmtpSink.start();
  t = await startTestHerald({ SMTP_URL: sink.url, PUBLIC_URL: 'https://mail.example.test' });
});
after(async () => {
  await t.close();
  await sink.close();
});

const complete = {
  from: 'Acme <news@acme.test>',
  subject: 'Hello {{ contact.name }}',
  html: '<p>Hi {{ contact.name }}, order {{ trigger.order }}</p>',
  text: 'Hi {{ contact.name }}',
};
const contact = (accountId: string) => writeContact(t.db, accountId, { email: randomEmail(), name: 'Ada Lovelace' }).then((r) => r.id);
const campaignsOf = (accountId: string) => t.db.kysely.selectFrom('campaigns').select('id').where('account_id', '=', accountId).execute();

describe('preview of a campaign not saved yet', () => {
  test('renders the form content for the contact, with sample trigger data, and stores nothing', async () => {
    const { panel, accountId } = await signedIn(t);
    const contactId = await contact(accountId);
    const res = await panel.post('/campaigns/preview', {
      contactId,
      campaign: { channel: 'email', subject: 'Hi {{ contact.name }} ({{ campaign.name }})', html: complete.html },
      data: { order: 'A-42' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.subject, 'Hi Ada Lovelace (New campaign)');
    assert.match(res.body.html, /^<p>Hi Ada Lovelace, order A-42<\/p>/);
    assert.deepEqual(await campaignsOf(accountId), [], 'no campaign created');
  });

  test('a Liquid error is a 400 at the field under /campaign, in words with its line', async () => {
    const { panel, accountId } = await signedIn(t);
    const res = await panel.post('/campaigns/preview', {
      contactId: await contact(accountId),
      campaign: { channel: 'email', subject: 'Hi {% iff x %}', html: '<p>ok</p>\n{{ contact.name | shout }}' },
    });
    const body = assertError(res, 400, 'Validation Error');
    assert.deepEqual(body.details, [
      { path: '/campaign/subject', message: "Subject, line 1: tag 'iff' is not defined" },
      { path: '/campaign/html', message: "HTML body, line 2: filter 'shout' is not defined" },
    ]);
  });

  test('needs the channel; refuses unknown members and an unknown contact', async () => {
    const { panel, accountId } = await signedIn(t);
    const contactId = await contact(accountId);
    assertError(
      await panel.post('/campaigns/preview', { contactId, campaign: { html: 'x' } }),
      400,
      'Validation Error',
      '/campaign/channel',
    );
    assertError(
      await panel.post('/campaigns/preview', { contactId, campaign: { channel: 'email', colour: 'red' } }),
      400,
      'Validation Error',
      '/campaign/colour',
    );
    assertError(
      await panel.post('/campaigns/preview', { contactId: 'ld_nope', campaign: { channel: 'email', html: 'x' } }),
      404,
      'Lead not found',
    );
  });

  test("cannot preview with another account's contact", async () => {
    const other = await signedIn(t);
    const theirs = await contact(other.accountId);
    const { panel } = await signedIn(t);
    assertError(
      await panel.post('/campaigns/preview', { contactId: theirs, campaign: { channel: 'email', html: '{{ contact.name }}' } }),
      404,
      'Lead not found',
    );
  });
});

describe('Liquid errors on save', () => {
  test('each field with an error is named at its path, in words; nothing is created', async () => {
    const { panel, accountId } = await signedIn(t);
    const res = await panel.post('/campaigns', {
      name: 'Broken',
      channel: 'email',
      subject: '{% iff contact.name %}x{% endif %}',
      html: '<p>\n\n{{ contact.name </p>',
      text: 'fine {{ contact.name }}',
    });
    const body = assertError(res, 400, 'Validation Error');
    assert.deepEqual(body.details, [
      { path: '/subject', message: "Subject, line 1: tag 'iff' is not defined" },
      { path: '/html', message: 'HTML body, line 3: output "{{ contact.name </p>" is not closed' },
    ]);
    assert.deepEqual(await campaignsOf(accountId), []);
  });

  test('a template that would load a file (include, render, layout) is refused at its field; nothing is created', async () => {
    const { panel, accountId } = await signedIn(t);
    const res = await panel.post('/campaigns', {
      name: 'Files',
      channel: 'email',
      subject: "{% include 'package.json' %}",
      html: "<p>{% if true %}{% render 'data/secret' %}{% endif %}</p>",
      text: "{% layout 'package.json' %}x",
    });
    assert.deepEqual(assertError(res, 400, 'Validation Error').details, [
      { path: '/subject', message: 'Subject, line 1: the "include" tag is not supported: templates cannot load other files' },
      { path: '/html', message: 'HTML body, line 1: the "render" tag is not supported: templates cannot load other files' },
      { path: '/text', message: 'Plain-text body, line 1: the "layout" tag is not supported: templates cannot load other files' },
    ]);
    assert.deepEqual(await campaignsOf(accountId), []);
  });

  test('a WhatsApp parameter is named by its number', async () => {
    const { panel } = await signedIn(t, { plan: 'pro' });
    const res = await panel.post('/campaigns', {
      name: 'W',
      channel: 'whatsapp',
      whatsappTemplate: 'hello',
      language: 'en',
      whatsappParams: ['{{ contact.name }}', '{{ contact.name | nope }}'],
    });
    assert.deepEqual(assertError(res, 400, 'Validation Error').details, [
      { path: '/whatsappParams/1', message: "Parameter 2, line 1: filter 'nope' is not defined" },
    ]);
  });
});

describe('test send to an address of one choice', () => {
  const tester = () => `tester-${Math.random().toString(36).slice(2)}@qa.example`;

  test("reaches that address over SMTP with the contact's data, marked [Test] and X-Herald-Test, outside statistics", async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'T', channel: 'email', ...complete })).body;
    const contactId = await contact(accountId);
    const to = tester();
    const before = sink.messages.length;
    const res = await panel.post(`/campaigns/${id}/test-send`, { contactId, to: ` ${to.toUpperCase()} `, data: { order: 'Z-9' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await sink.waitForRecipients([to]);
    const mail = sink.messages.slice(before).find((m) => m.envelope.to.includes(to));
    assert.ok(mail, `a message to ${to}`);
    assert.equal(mail.subject, '[Test] Hello Ada Lovelace');
    assert.equal(mail.headers['x-herald-test'], 'true');
    assert.match(mail.html!, /order Z-9/);
    const row = await eventually(async () => {
      const send = await sendRow(t.db, res.body.sendId);
      return send.status === 'sent' ? send : undefined;
    });
    assert.equal(Number(row.test), 1);
    assert.equal(row.test_to, to);
    assert.equal(row.to_address, to);
    const stats = (await panel.get(`/campaigns/${id}/stats`)).body;
    assert.equal(stats.totals.sent, 0, 'not in the statistics');
    assert.equal((await panel.get('/account')).body.usedThisMonth, 0, 'not in the allowance');
  });

  test('its unsubscribe link opts no one out: the contact only lent its data', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'T', channel: 'email', ...complete })).body;
    const contactId = await contact(accountId);
    const to = tester();
    const before = sink.messages.length;
    assert.equal((await panel.post(`/campaigns/${id}/test-send`, { contactId, to })).status, 200);
    await sink.waitForRecipients([to]);
    const mail = sink.messages.slice(before).find((m) => m.envelope.to.includes(to))!;
    const link = new URL(/<([^>]+)>/.exec(mail.headers['list-unsubscribe']!)![1]!);
    const page = await t.app.inject({ method: 'GET', url: link.pathname });
    assert.match(page.body, /test message: nothing was changed/);
    const post = await t.app.inject({
      method: 'POST',
      url: link.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    assert.equal(post.statusCode, 200);
    const row = await t.db.kysely.selectFrom('contacts').select('opted_out').where('id', '=', contactId).executeTakeFirstOrThrow();
    assert.equal(Number(row.opted_out), 0);
  });

  test('refused: an address that is not one for the channel (400 at /to), nothing queued', async () => {
    const { panel, accountId } = await signedIn(t, { plan: 'pro' });
    const { id } = (await panel.post('/campaigns', { name: 'T', channel: 'email', ...complete })).body;
    const contactId = await contact(accountId);
    assertError(await panel.post(`/campaigns/${id}/test-send`, { contactId, to: 'not-an-address' }), 400, 'Validation Error', '/to');
    const wa = (
      await panel.post('/campaigns', { name: 'W', channel: 'whatsapp', whatsappTemplate: 'hello', language: 'en', whatsappParams: ['x'] })
    ).body.id;
    assertError(await panel.post(`/campaigns/${wa}/test-send`, { contactId, to: 'ann@example.com' }), 400, 'Validation Error', '/to');
    const ok = await panel.post(`/campaigns/${wa}/test-send`, { contactId, to: randomPhone() });
    assert.equal(ok.status, 200, 'a phone number for WhatsApp, though the contact has none');
    const sends = await t.db.kysely.selectFrom('sends').select('id').where('account_id', '=', accountId).execute();
    assert.equal(sends.length, 1);
  });

  test('administrators only: a member may test-send to the contact, not to another address', async () => {
    const admin = await signedIn(t);
    const { id } = (await admin.panel.post('/campaigns', { name: 'T', channel: 'email', ...complete })).body;
    const contactId = await contact(admin.accountId);
    const { panel } = await signedIn(t, { role: 'member', accountId: admin.accountId });
    assertError(await panel.post(`/campaigns/${id}/test-send`, { contactId, to: tester() }), 403, 'Administrators only');
    assert.equal((await panel.post(`/campaigns/${id}/test-send`, { contactId })).status, 200);
  });

  test('rate-limited per account: 10 at once, then 429 with Retry-After', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'T', channel: 'email', ...complete })).body;
    const contactId = await contact(accountId);
    for (let i = 0; i < 10; i++) assert.equal((await panel.post(`/campaigns/${id}/test-send`, { contactId, to: tester() })).status, 200);
    const refused = await panel.post(`/campaigns/${id}/test-send`, { contactId, to: tester() });
    assertError(refused, 429, 'Too Many Requests');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal((await panel.post(`/campaigns/${id}/test-send`, { contactId })).status, 200, 'a test to the contact is not limited');
  });

  test("cannot test-send another account's campaign, nor with another account's contact", async () => {
    const other = await signedIn(t);
    const theirCampaign = (await other.panel.post('/campaigns', { name: 'T', channel: 'email', ...complete })).body.id;
    const theirContact = await contact(other.accountId);
    const { panel, accountId } = await signedIn(t);
    const mine = (await panel.post('/campaigns', { name: 'T', channel: 'email', ...complete })).body.id;
    assertError(
      await panel.post(`/campaigns/${theirCampaign}/test-send`, { contactId: await contact(accountId), to: tester() }),
      404,
      'Campaign not found',
    );
    assertError(await panel.post(`/campaigns/${mine}/test-send`, { contactId: theirContact, to: tester() }), 404, 'Lead not found');
  });
});
