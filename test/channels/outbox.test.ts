import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Channels, createChannels, listOutbox } from '../../src/channels/transports.js';
import { readOpenToken } from '../../src/modules/tracking/tracking-token.js';
import { unsubscribeUrl } from '../../src/modules/unsubscribe/unsubscribe-token.js';
import { EMAIL_FOOTER_TEXT } from '../../src/rendering/email.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runHerald } from '../helpers/cli.js';
import { captureLogger, processEnv } from '../helpers/harness.js';
import { insertCampaign, makeDelivery, makeRichContact } from './helpers.js';

/**
 * No SMTP_URL: email goes to the built-in outbox. The CLI runs the compiled build
 * (`npx tsc -p tsconfig.build.json` first).
 */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));
let t: TestApp;
let channels: Channels;
let env: Record<string, string>;

before(async () => {
  t = await startTestApp();
  assert.equal(t.config.smtpUrl, undefined);
  channels = createChannels(t.config, t.db, captureLogger({ raw: true }).logger);
  env = processEnv(t);
});
after(async () => {
  await channels.close();
  await t.close();
});

describe('email outbox', () => {
  test('keeps the rendered message: from, to, subject, HTML, text and headers', async () => {
    const rich = await makeRichContact(t);
    const campaign = await insertCampaign(t, rich.accountId, {
      subject: 'Hello {{ contact.name }}',
      html: '<p>{{ contact.name }} of {{ contact.fields.city }}</p>',
      text: 'Text {{ contact.kpis.orders }}',
    });
    const request = await makeDelivery(t.db, campaign, rich.contact);
    const receipt = await channels.email.deliver(request);
    assert.equal(receipt.delivered, true);
    assert.match(receipt.providerMessageId!, /^obx_/);

    const url = unsubscribeUrl(t.config, request.send.id);
    const { items } = await listOutbox(t.db, rich.accountId);
    assert.equal(items.length, 1);
    const item = items[0]!;
    // The open pixel ends the body; its token names this send (tracking tests cover the rest).
    const pixel = /<img src="([^"]+)"[^>]*>\n$/.exec(item.html ?? '');
    assert.ok(pixel, item.html ?? '');
    assert.equal(readOpenToken(t.config, pixel[1]!.split('/').pop()!)?.sendId, request.send.id);
    assert.deepEqual(
      { ...item, createdAt: undefined },
      {
        id: receipt.providerMessageId,
        sendId: request.send.id,
        campaignId: campaign.id,
        channel: 'email',
        to: rich.email,
        from: 'Acme <news@acme.test>',
        subject: 'Hello Ada Lovelace',
        html: `<p>Ada Lovelace of Lyon</p>\n<p style="margin-top:24px;font-size:12px;color:#666666">${EMAIL_FOOTER_TEXT.html} <a href="${url}">${EMAIL_FOOTER_TEXT.link}</a></p>\n${pixel[0]}`,
        text: `Text 3\n\n--\n${EMAIL_FOOTER_TEXT.text} ${url}\n`,
        headers: {
          'Message-ID': `<${request.send.id}@acme.test>`,
          'List-Unsubscribe': `<${url}>`,
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        },
        payload: null,
        createdAt: undefined,
      },
    );
    assert.match(item.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  test("lists newest first, filters by campaign, limits, and never shows another account's messages", async () => {
    const rich = await makeRichContact(t);
    const first = await insertCampaign(t, rich.accountId);
    const second = await insertCampaign(t, rich.accountId);
    const ids: string[] = [];
    for (const campaign of [first, second, second]) {
      ids.push((await channels.email.deliver(await makeDelivery(t.db, campaign, rich.contact))).providerMessageId!);
      await tick(); // "newest" is by millisecond
    }
    const other = await makeRichContact(t);
    await channels.email.deliver(await makeDelivery(t.db, await insertCampaign(t, other.accountId), other.contact));

    assert.deepEqual(
      (await listOutbox(t.db, rich.accountId)).items.map((i) => i.id),
      ids.slice().reverse(),
    );
    assert.deepEqual(
      (await listOutbox(t.db, rich.accountId, { campaignId: second.id })).items.map((i) => i.id),
      [ids[2], ids[1]],
    );
    assert.deepEqual(
      (await listOutbox(t.db, rich.accountId, { limit: 1 })).items.map((i) => i.id),
      [ids[2]],
    );
    assert.deepEqual((await listOutbox(t.db, rich.accountId, { campaignId: (await insertCampaign(t, other.accountId)).id })).items, []);
  });
});

describe('herald outbox list', () => {
  test("shows the account's outbox as one JSON object, newest first, with --campaign and --limit", async () => {
    const rich = await makeRichContact(t);
    const campaign = await insertCampaign(t, rich.accountId, { subject: 'CLI {{ contact.name }}' });
    const a = await channels.email.deliver(await makeDelivery(t.db, campaign, rich.contact));
    await tick();
    const b = await channels.email.deliver(await makeDelivery(t.db, campaign, rich.contact));

    const all = await runHerald(['outbox', 'list', '--account', rich.accountId], env);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout.trim().split('\n').length, 1);
    assert.deepEqual(
      all.json.items.map((i: any) => i.id),
      [b.providerMessageId, a.providerMessageId],
    );
    assert.equal(all.json.items[0].subject, 'CLI Ada Lovelace');
    assert.equal(all.json.items[0].to, rich.email);
    assert.match(all.json.items[0].createdAt, /Z$/);

    const limited = await runHerald(['outbox', 'list', '--account', rich.accountId, '--campaign', campaign.id, '--limit', '1'], env);
    assert.deepEqual(
      limited.json.items.map((i: any) => i.id),
      [b.providerMessageId],
    );
  });

  test('refuses a bad --limit and an unknown account', async () => {
    const rich = await makeRichContact(t);
    const bad = await runHerald(['outbox', 'list', '--account', rich.accountId, '--limit', 'ten'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--limit/);
    const unknown = await runHerald(['outbox', 'list', '--account', 'acc_nope'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Account not found/);
    assert.equal(unknown.stdout, '');
  });
});
