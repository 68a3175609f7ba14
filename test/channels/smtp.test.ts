import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DeliveryError } from '../../src/channels/channel.js';
import { type Channels, createChannels } from '../../src/channels/transports.js';
import { ConfigError, DEFAULT_SMTP_POOL_SIZE, loadConfig } from '../../src/config.js';
import { unsubscribeUrl } from '../../src/modules/unsubscribe/unsubscribe-token.js';
import { EMAIL_FOOTER_TEXT } from '../../src/rendering/email.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { captureLogger } from '../helpers/harness.js';
import { insertCampaign, makeDelivery, makeRichContact, rejection } from './helpers.js';

/** Email over real SMTP (nodemailer's pool) to a local sink, read back with a MIME parser. */
let t: TestApp;
let sink: SmtpSink;
let channels: Channels;
const log = captureLogger({ raw: true });

before(async () => {
  sink = await SmtpSink.start();
  t = await startTestApp({ SMTP_URL: `smtp://mailer:smtp-pass-123@127.0.0.1:${sink.port}` });
  channels = createChannels(t.config, t.db, log.logger);
});
after(async () => {
  await channels.close();
  await sink.close();
  await t.close();
});

async function emailDelivery(settings: Parameters<typeof insertCampaign>[2] = {}) {
  const rich = await makeRichContact(t);
  const campaign = await insertCampaign(t, rich.accountId, settings);
  return makeDelivery(t.db, campaign, rich.contact);
}

describe('email over SMTP', () => {
  for (const smtpThread of [true, false]) {
    test(`SMTP_POOL_SIZE bounds the connections a process opens to the server (pool ${smtpThread ? 'on its own thread' : 'on the event loop'})`, async () => {
      assert.equal(t.config.smtpPoolSize, DEFAULT_SMTP_POOL_SIZE);
      const pooled = createChannels({ ...t.config, smtpPoolSize: 2, smtpThread }, t.db, log.logger);
      try {
        const requests = await Promise.all(Array.from({ length: 6 }, () => emailDelivery()));
        const before = sink.messages.length;
        // A slow server: every message waits, so all six want a connection at once.
        sink.stallFor(200);
        const receipts = await Promise.all(requests.map((request) => pooled.email.deliver(request)));
        assert.ok(receipts.every((receipt) => receipt.delivered));
        const sessions = new Set((await sink.waitFor(before + 6)).slice(before).map((mail) => mail.sessionId));
        assert.equal(sessions.size, 2);
      } finally {
        await pooled.close();
      }
    });
  }

  test('an acceptance journal that cannot be opened does not stop email: the thread sends without it, and the log says so', {
    skip: process.env.DATABASE_URL ? 'SQLite only: PostgreSQL keeps no journal' : false,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-journal-'));
    // A directory where the journal's file should be: SQLite cannot open it.
    mkdirSync(join(dataDir, 'smtp-accepted.db'));
    const journalLog = captureLogger({ raw: true });
    const pooled = createChannels({ ...t.config, dataDir, smtpThread: true }, t.db, journalLog.logger);
    try {
      const receipt = await pooled.email.deliver(await emailDelivery());
      assert.equal(receipt.delivered, true);
      assert.match(
        journalLog.lines.join('\n'),
        /the SMTP acceptance journal cannot be opened: the SMTP thread holds one message per connection/,
      );
    } finally {
      await pooled.close();
    }
  });

  test('SMTP_THREAD: the pool on its own thread by default on SQLite, not on PostgreSQL; true or false decides', () => {
    const env = { DATA_DIR: t.config.dataDir, HERALD_SECRET: t.config.secret };
    assert.equal(loadConfig(env).smtpThread, true);
    assert.equal(loadConfig({ ...env, DATABASE_URL: 'postgres://h/db' }).smtpThread, false);
    assert.equal(loadConfig({ ...env, DATABASE_URL: 'postgres://h/db', SMTP_THREAD: 'true' }).smtpThread, true);
    assert.equal(loadConfig({ ...env, SMTP_THREAD: 'false' }).smtpThread, false);
    assert.throws(
      () => loadConfig({ ...env, SMTP_THREAD: 'yes' }),
      (err: Error) => err instanceof ConfigError && err.message === "SMTP_THREAD must be true or false, got 'yes'",
    );
  });

  test('SMTP_POOL_SIZE is a whole number from 1 to 100', () => {
    const env = { DATA_DIR: t.config.dataDir, HERALD_SECRET: t.config.secret };
    assert.equal(loadConfig({ ...env, SMTP_POOL_SIZE: '12' }).smtpPoolSize, 12);
    for (const bad of ['0', '101', '2.5', 'five'])
      assert.throws(
        () => loadConfig({ ...env, SMTP_POOL_SIZE: bad }),
        (err: Error) => err instanceof ConfigError && err.message === `SMTP_POOL_SIZE must be a whole number from 1 to 100, got '${bad}'`,
      );
  });

  test('arrives with HTML and text parts, personalised, from the campaign sender to the primary email', async () => {
    const request = await emailDelivery({
      subject: 'Hi {{ contact.name }}',
      html: '<p>{{ contact.name }} in {{ contact.fields.city }}: {{ contact.kpis.orders }} orders, {{ contact.tags | join: "," }}, {{ contact.metadata.plan }}</p>',
      text: 'Text for {{ contact.name }} ({{ contact.fields.City }}, {{ contact.kpis.orders }}, {{ contact.tags | first }}, {{ contact.metadata.plan }})',
    });
    const before = sink.messages.length;
    const receipt = await channels.email.deliver(request);
    const [mail] = (await sink.waitFor(before + 1)).slice(before);
    assert.ok(mail);
    assert.deepEqual(mail.envelope, { from: 'news@acme.test', to: [request.to] });
    assert.match(mail.from, /^"?Acme"? <news@acme\.test>$/);
    assert.equal(mail.to, request.to);
    assert.equal(mail.subject, 'Hi Ada Lovelace');
    assert.match(mail.html!, /<p>Ada Lovelace in Lyon: 3 orders, vip-customer, gold<\/p>/);
    assert.match(mail.text!, /^Text for Ada Lovelace \(Lyon, 3, vip-customer, gold\)/);
    // Receipt: accepted by the server (250), under the Message-ID the recipient sees.
    assert.equal(receipt.delivered, true);
    assert.equal(receipt.providerMessageId, mail.messageId);
    assert.equal(receipt.providerMessageId, `<${request.send.id}@acme.test>`);
  });

  test('carries List-Unsubscribe and List-Unsubscribe-Post one-click headers (RFC 8058)', async () => {
    const request = await emailDelivery();
    const before = sink.messages.length;
    await channels.email.deliver(request);
    const [mail] = (await sink.waitFor(before + 1)).slice(before);
    const url = unsubscribeUrl(t.config, request.send.id);
    assert.equal(mail!.headers['list-unsubscribe'], `<${url}>`);
    assert.equal(mail!.headers['list-unsubscribe-post'], 'List-Unsubscribe=One-Click');
    // No template placed the link: both parts carry the footer.
    assert.ok(mail!.html!.includes(`<a href="${url}">${EMAIL_FOOTER_TEXT.link}</a>`));
    assert.ok(mail!.text!.includes(`${EMAIL_FOOTER_TEXT.text} ${url}`));
  });

  test('an SMTP 4xx reply is a temporary failure', async () => {
    const request = await emailDelivery();
    sink.failNext(1, 451, 'Greylisted, try again');
    const err = await rejection(channels.email.deliver(request));
    assert.ok(err instanceof DeliveryError);
    assert.equal(err.temporary, true);
    assert.match(err.message, /451/);
  });

  test("an SMTP 5xx reply is a permanent failure with the server's reason", async () => {
    const request = await emailDelivery();
    sink.failNext(1, 550, 'Mailbox unavailable');
    const err = await rejection(channels.email.deliver(request));
    assert.ok(err instanceof DeliveryError);
    assert.equal(err.temporary, false);
    assert.match(err.message, /550.*Mailbox unavailable/);
  });

  test('a server that is down is a temporary failure, and sending works again once it is back', async () => {
    const first = await emailDelivery();
    await sink.stop();
    try {
      const err = await rejection(channels.email.deliver(first));
      assert.ok(err instanceof DeliveryError);
      assert.equal(err.temporary, true);
    } finally {
      await sink.restart();
    }
    const before = sink.messages.length;
    const receipt = await channels.email.deliver(first);
    assert.equal(receipt.delivered, true);
    await sink.waitFor(before + 1);
  });

  test('the SMTP credentials never reach a log line or an error reason', async () => {
    const request = await emailDelivery();
    sink.failNext(1, 554, 'No');
    const err = await rejection(channels.email.deliver(request));
    assert.ok(!err.message.includes('smtp-pass-123'));
    assert.ok(log.lines.length > 0, 'the channel logs');
    assert.ok(!log.lines.join('\n').includes('smtp-pass-123'));
    assert.ok(!t.logs.join('\n').includes('smtp-pass-123'));
  });
});
