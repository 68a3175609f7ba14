import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runHerald } from '../helpers/cli.js';
import { processEnv } from '../helpers/harness.js';
import { deliverEmail, emailTenant, type RunningHerald, startRunningHerald } from './helpers.js';

/**
 * The real bin/herald (compiled: `npx tsc -p tsconfig.build.json` first) on the running
 * service's database: statistics after real opens and clicks, and the WhatsApp verify token.
 */
let t: RunningHerald;
let env: Record<string, string>;
before(async () => {
  t = await startRunningHerald();
  env = processEnv(t);
});
after(() => t.close());

async function ok(...args: string[]) {
  const result = await runHerald(args, env);
  assert.equal(result.code, 0, `herald ${args.join(' ')} failed: ${result.stderr}`);
  assert.equal(result.stdout.trim().split('\n').length, 1, 'exactly one line of JSON on stdout');
  return result.json;
}

const today = () => new Date().toISOString().slice(0, 10);

describe('herald campaign stats and stats-daily', () => {
  test('after real opens and clicks: stats keeps the interfaces.md members, stats-daily dates them today', async () => {
    const tenant = await emailTenant(t);
    const [first, second] = [await deliverEmail(t, tenant), await deliverEmail(t, tenant)];
    for (const url of [first.links.pixel, first.links.pixel, second.links.pixel]) assert.equal((await fetch(url)).status, 200);
    assert.equal((await fetch(first.links.clicks[0]!, { redirect: 'manual' })).status, 302);

    const totals = await ok('campaign', 'stats', '--account', tenant.accountId, '--campaign', tenant.campaignId);
    assert.deepEqual(totals, {
      sent: 2,
      rejected: 0,
      optout: 0,
      error: 0,
      pending: 0,
      cancelled: 0,
      queued: 0,
      processed: 2,
      delivered: 2,
      opens: 3,
      uniqueOpens: 2,
      clicks: 1,
      uniqueClicks: 1,
    });

    const daily = await ok('campaign', 'stats-daily', '--account', tenant.accountId, '--campaign', tenant.campaignId, '--days', '3');
    assert.deepEqual(Object.keys(daily), ['days']);
    assert.equal(daily.days.length, 3);
    assert.deepEqual(daily.days[2], {
      date: today(),
      sent: 2,
      error: 0,
      processed: 2,
      delivered: 2,
      opens: 3,
      uniqueOpens: 2,
      clicks: 1,
      uniqueClicks: 1,
      bounced: 0,
      unsubscribes: 0,
    });
    assert.deepEqual(daily.days[0], {
      date: new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10),
      sent: 0,
      error: 0,
      processed: 0,
      delivered: 0,
      opens: 0,
      uniqueOpens: 0,
      clicks: 0,
      uniqueClicks: 0,
      bounced: 0,
      unsubscribes: 0,
    });
    // Without --days: the last 30 days.
    assert.equal((await ok('campaign', 'stats-daily', '--account', tenant.accountId, '--campaign', tenant.campaignId)).days.length, 30);
  });

  test('stats-daily refuses a bad --days and an unknown campaign, one line on stderr', async () => {
    const tenant = await emailTenant(t);
    for (const [args, code, pattern] of [
      [['--days', 'x'], 2, /--days must be a whole number/],
      [['--days', '0'], 1, /Validation Error: days: days must be a whole number from 1 to 366/],
    ] as [string[], number, RegExp][]) {
      const result = await runHerald(
        ['campaign', 'stats-daily', '--account', tenant.accountId, '--campaign', tenant.campaignId, ...args],
        env,
      );
      assert.equal(result.code, code, result.stderr);
      assert.match(result.stderr, pattern);
      assert.equal(result.stdout, '');
    }
    const unknown = await runHerald(['campaign', 'stats-daily', '--account', tenant.accountId, '--campaign', 'cmp_nope'], env);
    assert.deepEqual([unknown.code, unknown.stderr.trim()], [1, 'herald: Campaign not found']);
  });
});

describe('herald account update --whatsapp-verify-token', () => {
  test('the token set with the CLI passes the webhook handshake, and is stored encrypted', async () => {
    const { id: accountId } = await ok('account', 'create', '--name', 'WA', '--plan', 'pro');
    const token = `verify-${accountId}`;
    assert.deepEqual(await ok('account', 'update', '--account', accountId, '--whatsapp-verify-token', token), { id: accountId });
    const res = await fetch(`${t.base}/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=42`);
    assert.deepEqual([res.status, await res.text()], [200, '42']);
    const row = await t.db.kysely
      .selectFrom('accounts')
      .select(['whatsapp_verify_token', 'whatsapp_verify_token_hash'])
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    assert.ok(row.whatsapp_verify_token?.startsWith('v1.') && !row.whatsapp_verify_token.includes(token), 'encrypted at rest');
    assert.ok(row.whatsapp_verify_token_hash && !row.whatsapp_verify_token_hash.includes(token));
  });

  test('an empty token is refused', async () => {
    const { id: accountId } = await ok('account', 'create', '--name', 'WA');
    const result = await runHerald(['account', 'update', '--account', accountId, '--whatsapp-verify-token', ' '], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /whatsappVerifyToken: the verify token must be/);
  });
});
