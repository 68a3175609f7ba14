import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiResponse, apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { runHerald } from '../helpers/cli.js';
import { uniq } from '../helpers/factories.js';
import { processEnv } from '../helpers/harness.js';

/** The CLI and an in-process app share one database: what one writes, the other sees. */
let t: TestApp;
let env: Record<string, string>;
before(async () => {
  t = await startTestApp();
  env = processEnv(t);
});
after(() => t.close());

const herald = (...args: string[]) => runHerald(args, env);

async function ok(...args: string[]) {
  const result = await herald(...args);
  assert.equal(result.code, 0, `herald ${args.join(' ')} failed: ${result.stderr}`);
  assert.equal(result.stdout.trim().split('\n').length, 1, 'exactly one line of JSON on stdout');
  return result.json;
}

async function fails(expectedCode: number, pattern: RegExp, ...args: string[]) {
  const result = await herald(...args);
  assert.equal(result.code, expectedCode, `expected exit ${expectedCode}, got ${result.code}: ${result.stderr}`);
  assert.equal(result.stdout, '', 'nothing on stdout on failure');
  assert.equal(result.stderr.trim().split('\n').length >= 1, true);
  assert.match(result.stderr.split('\n')[0]!, pattern);
  return result;
}

describe('herald account', () => {
  test('create makes a free account with the default allowance', async () => {
    const { id } = await ok('account', 'create', '--name', 'Acme');
    assert.match(id, /^acc_[0-9a-z]+$/);
    const row = await t.db.kysely.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.plan, 'free');
    assert.equal(row.allowance, 1000);
  });

  test('create takes a plan and an allowance', async () => {
    const { id } = await ok('account', 'create', '--name', 'Big', '--plan', 'pro', '--allowance', '25');
    const row = await t.db.kysely.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.plan, row.allowance], ['pro', 25]);
  });

  test('update changes the plan, clears the allowance and stores WhatsApp settings encrypted', async () => {
    const { id } = await ok('account', 'create', '--name', 'Up');
    assert.deepEqual(
      await ok(
        'account',
        'update',
        '--account',
        id,
        '--plan',
        'pro',
        '--allowance',
        'none',
        '--whatsapp-phone-number-id',
        '1234',
        '--whatsapp-token',
        'tok-secret',
        '--whatsapp-app-secret',
        'app-secret',
      ),
      { id },
    );
    const row = await t.db.kysely.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.plan, row.allowance, row.whatsapp_phone_number_id], ['pro', null, '1234']);
    assert.ok(row.whatsapp_token && !row.whatsapp_token.includes('tok-secret'), 'token is not stored in clear');
    assert.ok(row.whatsapp_app_secret && !row.whatsapp_app_secret.includes('app-secret'));
  });

  test('usage errors exit 2 with one line on stderr', async () => {
    await fails(2, /--name is required/, 'account', 'create');
    await fails(2, /--plan must be free or pro/, 'account', 'create', '--name', 'X', '--plan', 'gold');
    await fails(2, /--allowance must be a whole number/, 'account', 'create', '--name', 'X', '--allowance', 'lots');
    await fails(2, /unknown command/, 'account', 'explode');
    await fails(2, /Unknown option '--colour'/, 'account', 'create', '--name', 'X', '--colour', 'red');
  });

  test('an unknown account is refused', async () => {
    await fails(1, /^herald: Account not found$/, 'account', 'update', '--account', 'acc_nope', '--plan', 'pro');
  });
});

describe('herald key', () => {
  test('create prints the id and an hk_ key of 32 base62 characters that the API accepts', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Keys');
    const created = await ok('key', 'create', '--account', account, '--name', 'backend', '--scopes', 'events:write,leads:write');
    assert.match(created.id, /^key_/);
    assert.match(created.key, /^hk_[0-9A-Za-z]{32}$/);
    const res = await apiClient(t.app, created.key).post('/api/events', { type: 'x' });
    assert.equal(res.status, 400, 'authenticated: the key passes and the body is checked');
    assert.equal(res.body.message, 'leadId or tracker is required');
  });

  test('the key value is stored hashed and encrypted, never in clear', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Hash');
    const created = await ok('key', 'create', '--account', account, '--name', 'k', '--scopes', 'leads:read');
    const row = await t.db.kysely.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(created.key));
  });

  test('--inactive creates a key that is refused with 403', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Off');
    const { key } = await ok('key', 'create', '--account', account, '--name', 'k', '--scopes', 'events:write', '--inactive');
    const res = await apiClient(t.app, key).post('/api/events', { type: 'x' });
    assert.deepEqual([res.status, res.body.message], [403, 'API key is not active']);
  });

  test('--expires in the past makes a key that is expired at once', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Old');
    const { key } = await ok('key', 'create', '--account', account, '--name', 'k', '--scopes', 'events:write', '--expires', '2020-01-01');
    const res = await apiClient(t.app, key).post('/api/events', { type: 'x' });
    assert.deepEqual([res.status, res.body.message], [403, 'API key has expired']);
  });

  test('--expires DATE means the end of that day UTC; a timestamp is taken as is', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'When');
    const day = await ok('key', 'create', '--account', account, '--name', 'a', '--scopes', 'events:write', '--expires', '2030-06-15');
    const stamp = await ok(
      'key',
      'create',
      '--account',
      account,
      '--name',
      'b',
      '--scopes',
      'events:write',
      '--expires',
      '2030-06-15T08:30:00.000Z',
    );
    const rows = await t.db.kysely.selectFrom('api_keys').select(['id', 'expires_at']).where('account_id', '=', account).execute();
    const byId = new Map(rows.map((r) => [r.id, r.expires_at]));
    assert.equal(byId.get(day.id), Date.parse('2030-06-15T23:59:59.999Z'));
    assert.equal(byId.get(stamp.id), Date.parse('2030-06-15T08:30:00.000Z'));
    await fails(
      2,
      /--expires must be a date/,
      'key',
      'create',
      '--account',
      account,
      '--name',
      'c',
      '--scopes',
      'events:write',
      '--expires',
      'tomorrow',
    );
    await fails(
      2,
      /not a real date/,
      'key',
      'create',
      '--account',
      account,
      '--name',
      'c',
      '--scopes',
      'events:write',
      '--expires',
      '2030-02-30',
    );
  });

  test('update switches a key off and the running server refuses it within 1 second', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Live');
    const created = await ok('key', 'create', '--account', account, '--name', 'k', '--scopes', 'events:write');
    const api = apiClient(t.app, created.key);
    assert.equal((await api.post('/api/events', { type: 'x' })).status, 400, 'accepted (then the body is checked)');
    assert.deepEqual(await ok('key', 'update', '--account', account, '--key', created.id, '--active', 'false'), { id: created.id });
    const switchedOffAt = Date.now();
    let res: ApiResponse;
    do {
      res = await api.post('/api/events', { type: 'x' });
      if (res.status === 403) break;
      await new Promise((r) => setTimeout(r, 50));
    } while (Date.now() - switchedOffAt < 1000);
    assert.deepEqual([res.status, res.body.message], [403, 'API key is not active']);
  });

  test('update changes scopes and clears the expiration with none', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Scopes');
    const created = await ok('key', 'create', '--account', account, '--name', 'k', '--scopes', 'leads:read', '--expires', '2020-01-01');
    await ok(
      'key',
      'update',
      '--account',
      account,
      '--key',
      created.id,
      '--scopes',
      'events:write',
      '--expires',
      'none',
      '--active',
      'true',
    );
    const row = await t.db.kysely.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.deepEqual([JSON.parse(row.scopes), row.expires_at, row.active], [['events:write'], null, 1]);
  });

  test("bad scopes, another account's key and bad flags are refused", async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Bad');
    const { id: other } = await ok('account', 'create', '--name', 'Other');
    await fails(
      1,
      /Validation Error: scopes: unknown scope 'leads:delete'/,
      'key',
      'create',
      '--account',
      account,
      '--name',
      'k',
      '--scopes',
      'leads:delete',
    );
    const created = await ok('key', 'create', '--account', account, '--name', 'k', '--scopes', 'leads:read');
    await fails(1, /API key not found/, 'key', 'update', '--account', other, '--key', created.id, '--active', 'false');
    await fails(2, /--active must be true or false/, 'key', 'update', '--account', account, '--key', created.id, '--active', 'maybe');
    const row = await t.db.kysely.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(row.active, 1, 'the other account could not switch it off');
  });
});

describe('herald field, kpi, user', () => {
  test('field create prints the name and type; duplicates (any case) and unknown types are refused', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Fields');
    assert.deepEqual(await ok('field', 'create', '--account', account, '--name', 'City', '--type', 'location'), {
      name: 'City',
      type: 'location',
    });
    await fails(
      1,
      /custom field named 'city' already exists/,
      'field',
      'create',
      '--account',
      account,
      '--name',
      'city',
      '--type',
      'string',
    );
    await fails(
      1,
      /Validation Error: type: type must be one of/,
      'field',
      'create',
      '--account',
      account,
      '--name',
      'Other',
      '--type',
      'colour',
    );
  });

  test('kpi create prints the id and name; a duplicate id is refused', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Kpis');
    assert.deepEqual(await ok('kpi', 'create', '--account', account, '--id', 'ltv', '--name', 'Lifetime value'), {
      id: 'ltv',
      name: 'Lifetime value',
    });
    await fails(1, /KPI with id 'ltv' already exists/, 'kpi', 'create', '--account', account, '--id', 'ltv', '--name', 'Again');
  });

  test('user create stores a memory-hard password hash, admin by default', async () => {
    const { id: account } = await ok('account', 'create', '--name', 'Users');
    const email = `${uniq('admin')}@example.com`;
    const { id } = await ok('user', 'create', '--account', account, '--email', email, '--password', 'correct horse battery');
    assert.match(id, /^usr_/);
    const row = await t.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.role, 'admin');
    assert.match(row.password_hash, /^scrypt\$/);
    assert.ok(!row.password_hash.includes('correct horse'));
    await fails(
      1,
      /user with email .* already exists/,
      'user',
      'create',
      '--account',
      account,
      '--email',
      email,
      '--password',
      'another password',
    );
    await fails(
      1,
      /password must be at least 8 characters/,
      'user',
      'create',
      '--account',
      account,
      '--email',
      `${uniq('m')}@example.com`,
      '--password',
      'short',
    );
    await fails(
      2,
      /--role must be admin or member/,
      'user',
      'create',
      '--account',
      account,
      '--email',
      `${uniq('m')}@example.com`,
      '--password',
      'long enough',
      '--role',
      'owner',
    );
  });
});

describe('key values never reach the terminal', () => {
  test('an error that echoes what was typed cuts a key value out (unknown option, unknown command, any spelling)', async () => {
    const key = `hk_${'Q'.repeat(32)}`;
    const results = [
      await herald('key', 'create', '--account', 'acc_none', `--${key}`),
      await herald('key', 'create', '--account', 'acc_none', `--${key.replace('_', '%5F')}`),
      await herald('nosuch', key),
    ];
    for (const result of results) {
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /^herald: .*\[REDACTED\]/);
      assert.ok(!result.stderr.includes('Q'.repeat(32)), result.stderr);
    }
  });
});
