import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findCampaign, getWebhookSecret } from '../../src/modules/campaigns/campaigns.service.js';
import { runHerald } from '../helpers/cli.js';
import { processEnv } from '../helpers/harness.js';
import { type CampaignTestEnv, insertSend, openTestDb } from './helpers.js';

/** The real bin/herald (compiled: run `npx tsc -p tsconfig.build.json` first) on the test's database. */
let t: CampaignTestEnv;
let env: Record<string, string>;
before(async () => {
  t = await openTestDb();
  env = processEnv(t);
});
after(() => t.close());

async function ok(...args: string[]) {
  const result = await runHerald(args, env);
  assert.equal(result.code, 0, `herald ${args.join(' ')} failed: ${result.stderr}`);
  assert.equal(result.stdout.trim().split('\n').length, 1, 'exactly one line of JSON on stdout');
  assert.equal(result.stderr, '');
  return result.json;
}

async function fails(expectedCode: number, pattern: RegExp, ...args: string[]) {
  const result = await runHerald(args, env);
  assert.equal(result.code, expectedCode, `expected exit ${expectedCode}, got ${result.code}: ${result.stderr}`);
  assert.equal(result.stdout, '', 'nothing on stdout on failure');
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line on stderr: ${result.stderr}`);
  assert.match(result.stderr.trimEnd(), pattern);
}

const account = async (plan = 'free') => (await ok('account', 'create', '--name', 'Cli', '--plan', plan)).id as string;
const email = ['--channel', 'email', '--from', 'Shop <shop@example.com>', '--subject', 'Hi {{ contact.name }}', '--html', '<p>Hi</p>'];

describe('herald campaign', () => {
  test('create prints the id and webhook secret; stats prints the interfaces.md counters', async () => {
    const acc = await account();
    const created = await ok('campaign', 'create', '--account', acc, '--name', 'Welcome', ...email, '--activate');
    assert.deepEqual(Object.keys(created), ['id', 'webhookSecret']);
    assert.match(created.id, /^cmp_/);
    assert.match(created.webhookSecret, /^whsec_/);
    assert.equal(await getWebhookSecret(t.db, t.config, acc, created.id), created.webhookSecret);
    assert.equal((await findCampaign(t.db.kysely, acc, created.id))!.active, true);

    await insertSend(t.db, acc, created.id, { status: 'sent', processed: true, delivered: true });
    await insertSend(t.db, acc, created.id, { status: 'sending' });
    assert.deepEqual(await ok('campaign', 'stats', '--account', acc, '--campaign', created.id), {
      sent: 1,
      rejected: 0,
      optout: 0,
      error: 0,
      pending: 0,
      cancelled: 0,
      queued: 1,
      processed: 1,
      delivered: 1,
      opens: 0,
      uniqueOpens: 0,
      clicks: 0,
      uniqueClicks: 0,
    });
  });

  test('create takes every option; repeated --webhook and --whatsapp-param keep their order', async () => {
    const acc = await account('pro');
    const mail = await ok(
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'All',
      ...email,
      '--text',
      'Hi',
      '--schedule',
      'manual',
      '--mode',
      'delay',
      '--delay',
      '120',
      '--reentry',
      '--cooldown',
      '2',
      '--webhook',
      'https://93.184.215.14/1',
      '--webhook',
      'https://93.184.215.14/2',
    );
    const c = (await findCampaign(t.db.kysely, acc, mail.id))!;
    assert.deepEqual(
      [c.schedule, c.mode, c.delaySeconds, c.reentry, c.cooldownDays, c.active, c.email.text],
      ['manual', 'delay', 120, true, 2, false, 'Hi'],
    );
    assert.deepEqual(c.webhooks, ['https://93.184.215.14/1', 'https://93.184.215.14/2']);

    const wa = await ok(
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'WA',
      '--channel',
      'whatsapp',
      '--whatsapp-template',
      'order_ready',
      '--language',
      'en',
      '--whatsapp-param',
      '{{ contact.name }}',
      '--whatsapp-param',
      '#{{ contact.fields.order }}',
      '--activate',
    );
    const w = (await findCampaign(t.db.kysely, acc, wa.id))!;
    assert.deepEqual(w.whatsapp, {
      template: 'order_ready',
      language: 'en',
      params: ['{{ contact.name }}', '#{{ contact.fields.order }}'],
    });
    assert.equal(w.active, true);
  });

  test('update --active false|true switches the campaign; --reentry true|false and --webhook none work', async () => {
    const acc = await account();
    const { id } = await ok(
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'U',
      ...email,
      '--webhook',
      'https://93.184.215.14/1',
      '--activate',
    );
    assert.deepEqual(await ok('campaign', 'update', '--account', acc, '--campaign', id, '--active', 'false'), { id });
    assert.equal((await findCampaign(t.db.kysely, acc, id))!.active, false);
    await ok(
      'campaign',
      'update',
      '--account',
      acc,
      '--campaign',
      id,
      '--active',
      'true',
      '--reentry',
      'true',
      '--cooldown',
      '30',
      '--webhook',
      'none',
    );
    const c = (await findCampaign(t.db.kysely, acc, id))!;
    assert.deepEqual([c.active, c.reentry, c.cooldownDays, c.webhooks], [true, true, 30, []]);
    await ok('campaign', 'update', '--account', acc, '--campaign', id, '--reentry', 'false');
    const d = (await findCampaign(t.db.kysely, acc, id))!;
    assert.deepEqual([d.reentry, d.cooldownDays], [false, 0]);
  });

  test('list prints {"items": [...]} with ISO 8601 times', async () => {
    const acc = await account();
    const { id } = await ok('campaign', 'create', '--account', acc, '--name', 'Listed', '--channel', 'email');
    const { items } = await ok('campaign', 'list', '--account', acc);
    assert.deepEqual(
      items.map((c: { id: string }) => c.id),
      [id],
    );
    assert.match(items[0].createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(items[0].webhookSecret, undefined, 'the secret is not listed');
  });

  test('a refused setting exits 1 with the Validation Error on one stderr line', async () => {
    const acc = await account();
    const four = ['1', '2', '3', '4'].flatMap((n) => ['--webhook', `https://93.184.215.14/${n}`]);
    await fails(
      1,
      /^herald: Validation Error: webhooks: a campaign has at most 3 webhooks/,
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'X',
      ...email,
      ...four,
    );
    await fails(
      1,
      /^herald: Validation Error: webhooks\/0: .*private or loopback/,
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'X',
      ...email,
      '--webhook',
      'http://127.0.0.1/x',
    );
    await fails(
      1,
      /^herald: Validation Error: delaySeconds: /,
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'X',
      ...email,
      '--mode',
      'delay',
      '--delay',
      '2592001',
    );
    await fails(
      1,
      /^herald: Validation Error: html: HTML body, line 1: /,
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'X',
      ...email,
      '--html',
      '{% if %}',
    );
    await fails(
      1,
      /^herald: Validation Error: active: cannot activate: the email campaign has no subject/,
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'X',
      '--channel',
      'email',
      '--from',
      'a@example.com',
      '--html',
      'x',
      '--activate',
    );
    assert.deepEqual((await ok('campaign', 'list', '--account', acc)).items, [], 'nothing was created');
  });

  test('create --activate of a WhatsApp campaign on the free plan fails and creates nothing', async () => {
    const acc = await account('free');
    await fails(
      1,
      /^herald: Validation Error: active: .*pro plan/,
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'WA',
      '--channel',
      'whatsapp',
      '--whatsapp-template',
      'hello',
      '--language',
      'en',
      '--activate',
    );
    assert.deepEqual((await ok('campaign', 'list', '--account', acc)).items, []);
  });

  test("an unknown or another account's campaign is Campaign not found; an unknown account, Account not found", async () => {
    const acc = await account();
    const other = await account();
    const { id } = await ok('campaign', 'create', '--account', acc, '--name', 'Mine', '--channel', 'email');
    await fails(1, /^herald: Campaign not found$/, 'campaign', 'update', '--account', other, '--campaign', id, '--name', 'stolen');
    await fails(1, /^herald: Campaign not found$/, 'campaign', 'stats', '--account', other, '--campaign', id);
    await fails(1, /^herald: Account not found$/, 'campaign', 'list', '--account', 'acc_nope');
    assert.equal((await findCampaign(t.db.kysely, acc, id))!.name, 'Mine');
  });

  test('usage mistakes exit 2', async () => {
    const acc = await account();
    await fails(2, /--name is required/, 'campaign', 'create', '--account', acc, '--channel', 'email');
    await fails(
      2,
      /--delay must be a whole number/,
      'campaign',
      'create',
      '--account',
      acc,
      '--name',
      'X',
      '--channel',
      'email',
      '--delay',
      'soon',
    );
    await fails(2, /--active must be true or false/, 'campaign', 'update', '--account', acc, '--campaign', 'cmp_x', '--active', 'yes');
    await fails(
      2,
      /--webhook none clears the list/,
      'campaign',
      'update',
      '--account',
      acc,
      '--campaign',
      'cmp_x',
      '--webhook',
      'none',
      '--webhook',
      'https://93.184.215.14/',
    );
  });
});
