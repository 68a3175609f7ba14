import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCampaign, findCampaign, getWebhookSecret, listCampaigns } from '../../src/modules/campaigns/campaigns.service.js';
import { makeAccount } from '../helpers/factories.js';
import { type CampaignTestEnv, campaignRow, emailCampaign, openTestDb, rejectsWith, whatsappCampaign } from './helpers.js';

let t: CampaignTestEnv;
before(async () => {
  t = await openTestDb();
});
after(() => t.close());

const account = async () => (await makeAccount(t.db)).id;

describe('campaign create: defaults and stored settings', () => {
  test('a minimal campaign gets the defaults of interfaces.md', async () => {
    const acc = await account();
    const { id } = await createCampaign(t.db, t.config, acc, { name: 'Bare', channel: 'email' });
    assert.match(id, /^cmp_[0-9a-z]+$/);
    const c = await findCampaign(t.db.kysely, acc, id);
    assert.ok(c);
    assert.deepEqual(
      {
        schedule: c.schedule,
        mode: c.mode,
        delay: c.delaySeconds,
        reentry: c.reentry,
        cooldown: c.cooldownDays,
        active: c.active,
        webhooks: c.webhooks,
      },
      { schedule: 'api', mode: 'immediate', delay: 0, reentry: false, cooldown: 0, active: false, webhooks: [] },
    );
    assert.deepEqual(c.email, { from: null, subject: null, html: null, text: null });
    assert.deepEqual(c.whatsapp, { template: null, language: null, params: [] });
  });

  test('every setting given is stored as given (name trimmed)', async () => {
    const acc = await account();
    const { id } = await createCampaign(t.db, t.config, acc, {
      ...emailCampaign({ name: '  Onboarding  ' }),
      schedule: 'manual',
      mode: 'delay',
      delaySeconds: 90,
      reentry: true,
      cooldownDays: 7,
      text: 'Hi {{ contact.name }}',
      webhooks: ['https://93.184.215.14/a', 'http://8.8.8.8:8080/b'],
    });
    const c = (await findCampaign(t.db.kysely, acc, id))!;
    assert.equal(c.name, 'Onboarding');
    assert.deepEqual([c.schedule, c.mode, c.delaySeconds, c.reentry, c.cooldownDays], ['manual', 'delay', 90, true, 7]);
    assert.deepEqual(c.email, {
      from: 'Herald <news@example.com>',
      subject: 'Hello {{ contact.name }}',
      html: '<p>Hi {{ contact.name }}</p>',
      text: 'Hi {{ contact.name }}',
    });
    assert.deepEqual(c.webhooks, ['https://93.184.215.14/a', 'http://8.8.8.8:8080/b'], 'webhooks keep their order');
  });

  test('WhatsApp template, language and the ordered body parameters are stored', async () => {
    const acc = await account();
    const { id } = await createCampaign(
      t.db,
      t.config,
      acc,
      whatsappCampaign({ whatsappParams: ['{{ contact.name }}', 'fixed', '{{ contact.fields.city }}'] }),
    );
    const c = (await findCampaign(t.db.kysely, acc, id))!;
    assert.deepEqual(c.whatsapp, {
      template: 'appointment_reminder',
      language: 'en_US',
      params: ['{{ contact.name }}', 'fixed', '{{ contact.fields.city }}'],
    });
  });

  test('create returns a whsec_ secret, stored encrypted and readable again with getWebhookSecret', async () => {
    const acc = await account();
    const { id, webhookSecret } = await createCampaign(t.db, t.config, acc, emailCampaign());
    assert.match(webhookSecret, /^whsec_[A-Za-z0-9+/]{32}$/);
    const row = await campaignRow(t.db, id);
    assert.ok(!row.webhook_secret.includes(webhookSecret.slice(6)), 'not stored in clear');
    assert.equal(await getWebhookSecret(t.db, t.config, acc, id), webhookSecret);
    const other = await createCampaign(t.db, t.config, acc, emailCampaign());
    assert.notEqual(other.webhookSecret, webhookSecret, 'one secret per campaign');
  });

  test('an unknown account is refused', async () => {
    await rejectsWith(createCampaign(t.db, t.config, 'acc_nope', emailCampaign()), 'ACCOUNT_NOT_FOUND');
  });

  test("listCampaigns gives the account's campaigns, oldest first, with their webhooks", async () => {
    const acc = await account();
    const first = await createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: ['https://93.184.215.14/1'] }));
    const second = await createCampaign(t.db, t.config, acc, whatsappCampaign());
    const items = await listCampaigns(t.db, acc);
    assert.deepEqual(
      items.map((c) => c.id),
      [first.id, second.id],
    );
    assert.deepEqual(
      items.map((c) => c.webhooks),
      [['https://93.184.215.14/1'], []],
    );
  });
});

describe('campaign create: each setting is checked', () => {
  test('name must be 1 to 255 characters', async () => {
    const acc = await account();
    await rejectsWith(createCampaign(t.db, t.config, acc, { name: '   ', channel: 'email' }), 'VALIDATION', '/name', /1 to 255/);
    await rejectsWith(createCampaign(t.db, t.config, acc, { name: 'x'.repeat(256), channel: 'email' }), 'VALIDATION', '/name');
    await createCampaign(t.db, t.config, acc, { name: 'x'.repeat(255), channel: 'email' });
  });

  test('channel, schedule and mode accept only their values', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, { name: 'c', channel: 'sms' as never }),
      'VALIDATION',
      '/channel',
      /email or whatsapp/,
    );
    await rejectsWith(
      createCampaign(t.db, t.config, acc, { name: 'c', channel: 'email', schedule: 'cron' as never }),
      'VALIDATION',
      '/schedule',
      /api or manual/,
    );
    await rejectsWith(
      createCampaign(t.db, t.config, acc, { name: 'c', channel: 'email', mode: 'later' as never }),
      'VALIDATION',
      '/mode',
      /immediate or delay/,
    );
  });

  test('delay mode needs 1 second to 30 days; outside that is refused', async () => {
    const acc = await account();
    const delay = (delaySeconds: number) =>
      createCampaign(t.db, t.config, acc, { name: 'd', channel: 'email', mode: 'delay', delaySeconds });
    await rejectsWith(delay(0), 'VALIDATION', '/delaySeconds', /delay mode needs a delay from 1/);
    await rejectsWith(delay(2_592_001), 'VALIDATION', '/delaySeconds', /2592000/);
    await rejectsWith(delay(1.5), 'VALIDATION', '/delaySeconds', /whole number/);
    await rejectsWith(createCampaign(t.db, t.config, acc, { name: 'd', channel: 'email', mode: 'delay' }), 'VALIDATION', '/delaySeconds');
    for (const ok of [1, 2_592_000]) assert.equal((await campaignRow(t.db, (await delay(ok)).id)).delay_seconds, ok);
  });

  test('a delay without delay mode is refused (a forgotten mode)', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, { name: 'd', channel: 'email', delaySeconds: 60 }),
      'VALIDATION',
      '/delaySeconds',
      /only in delay mode/,
    );
  });

  test('cooldown is 0 to 3650 days and only with re-entry on', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, { name: 'c', channel: 'email', cooldownDays: 5 }),
      'VALIDATION',
      '/cooldownDays',
      /only when re-entry is on/,
    );
    await rejectsWith(
      createCampaign(t.db, t.config, acc, { name: 'c', channel: 'email', reentry: true, cooldownDays: 3651 }),
      'VALIDATION',
      '/cooldownDays',
      /0 to 3650/,
    );
    const { id } = await createCampaign(t.db, t.config, acc, { name: 'c', channel: 'email', reentry: true, cooldownDays: 3650 });
    assert.deepEqual([(await campaignRow(t.db, id)).reentry, (await campaignRow(t.db, id)).cooldown_days], [1, 3650]);
  });

  test('from must be an address, optionally with a display name', async () => {
    const acc = await account();
    for (const bad of ['not-an-address', 'Name <nope>', 'Ann <a@b.co', 'x@y']) {
      await rejectsWith(createCampaign(t.db, t.config, acc, emailCampaign({ from: bad })), 'VALIDATION', '/from', /not a valid sender/);
    }
    const plain = await createCampaign(t.db, t.config, acc, emailCampaign({ from: ' news@example.com ' }));
    assert.equal((await campaignRow(t.db, plain.id)).email_from, 'news@example.com');
    const named = await createCampaign(t.db, t.config, acc, emailCampaign({ from: '"Acme, Inc"   <hello@acme.test>' }));
    assert.equal((await campaignRow(t.db, named.id)).email_from, '"Acme, Inc" <hello@acme.test>');
  });

  test('a Liquid syntax error is refused at the member that holds it, and nothing is created', async () => {
    const acc = await account();
    const labels = { subject: 'Subject', html: 'HTML body', text: 'Plain-text body' } as const;
    for (const member of ['subject', 'html', 'text'] as const) {
      await rejectsWith(
        createCampaign(t.db, t.config, acc, emailCampaign({ [member]: 'Hi {{ contact.name ' })),
        'VALIDATION',
        `/${member}`,
        new RegExp(`^${labels[member]}, line 1: output "\\{\\{ contact\\.name " is not closed$`),
      );
    }
    await rejectsWith(
      createCampaign(t.db, t.config, acc, emailCampaign({ html: '{% if contact.name %}unclosed' })),
      'VALIDATION',
      '/html',
      /^HTML body, line 1: tag \{% if contact\.name %\} is not closed$/,
    );
    await rejectsWith(
      createCampaign(t.db, t.config, acc, emailCampaign({ html: '<p>\n{{ contact.name | no_such_filter }}' })),
      'VALIDATION',
      '/html',
      /^HTML body, line 2: filter 'no_such_filter' is not defined$/,
    );
    assert.deepEqual(await listCampaigns(t.db, acc), []);
  });

  test('a subject must be one line', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, emailCampaign({ subject: 'Hi\r\nBcc: x@evil.test' })),
      'VALIDATION',
      '/subject',
      /one line/,
    );
  });

  test('WhatsApp parameters are checked one by one as Liquid, at their index', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, whatsappCampaign({ whatsappParams: ['ok', '{{ contact.name'] })),
      'VALIDATION',
      '/whatsappParams/1',
      /^Parameter 2, line 1: /,
    );
    await rejectsWith(
      createCampaign(t.db, t.config, acc, whatsappCampaign({ whatsappParams: ['  '] })),
      'VALIDATION',
      '/whatsappParams/0',
      /non-empty/,
    );
  });

  test('WhatsApp template names and language codes have their formats', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, whatsappCampaign({ whatsappTemplate: 'Order Ready!' })),
      'VALIDATION',
      '/whatsappTemplate',
      /lowercase/,
    );
    await rejectsWith(
      createCampaign(t.db, t.config, acc, whatsappCampaign({ language: 'english' })),
      'VALIDATION',
      '/language',
      /language code/,
    );
    const { id } = await createCampaign(t.db, t.config, acc, whatsappCampaign({ language: 'pt_BR' }));
    assert.equal((await campaignRow(t.db, id)).whatsapp_language, 'pt_BR');
  });

  test('all problems of one call are reported together', async () => {
    const acc = await account();
    const err = await rejectsWith(
      createCampaign(t.db, t.config, acc, emailCampaign({ from: 'nope', html: '{{', webhooks: ['ftp://x'] })),
      'VALIDATION',
    );
    assert.deepEqual(
      err.details?.map((d) => d.path),
      ['/from', '/html', '/webhooks/0'],
    );
  });
});
