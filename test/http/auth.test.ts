import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKeyValue, updateKey } from '../../src/modules/keys/keys.service.js';
import {
  type ApiResponse,
  apiClient,
  assertApiError as assertError,
  assertMissingScope,
  startTestApp,
  type TestApp,
} from '../helpers/app.js';
import { makeAccount, makeContact, makeKey, makeTenant } from '../helpers/factories.js';
import { sleep } from '../helpers/herald.js';

/**
 * The key checks of service-spec.md (Authentication) and decisions.md (Naming, Order of
 * checks), through POST /api/events (scope events:write).
 */

function assertEventStored(res: ApiResponse, leadId: string): void {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.leadId, leadId);
  assert.match(res.body.id, /^ev_/);
}

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

/** A fresh account with one contact and a key of the given scopes. */
async function tenantWithContact(scopes?: string[]) {
  const tenant = await makeTenant(t.db, t.config, { scopes });
  const leadId = (await makeContact(t.db, tenant.accountId)).id;
  return { ...tenant, leadId };
}

describe('key checks', () => {
  test('no key at all answers 401 API key is required', async () => {
    const res = await apiClient(t.app).post('/api/events', { type: 'visit', leadId: 'ld_x' });
    assertError(res, 401, 'Unauthorized', 'API key is required');
  });

  test('an empty key header counts as no key', async () => {
    const res = await apiClient(t.app).post('/api/events', { type: 'visit', leadId: 'ld_x' }, { 'x-service-api-key': '' });
    assertError(res, 401, 'Unauthorized', 'API key is required');
  });

  test('an unknown key answers 404 API key not found', async () => {
    const res = await apiClient(t.app, 'hk_doesnotexist0000000000000000000').post('/api/events', { type: 'visit', leadId: 'ld_x' });
    assertError(res, 404, 'Not Found', 'API key not found');
  });

  test('an inactive key answers 403 API key is not active', async () => {
    const account = await makeAccount(t.db);
    const key = await makeKey(t.db, t.config, account.id, { active: false });
    const res = await apiClient(t.app, key.key).post('/api/events', { type: 'visit', leadId: 'ld_x' });
    assertError(res, 403, 'Forbidden', 'API key is not active');
  });

  test('a key whose expiry has passed answers 403 API key has expired', async () => {
    const account = await makeAccount(t.db);
    const key = await makeKey(t.db, t.config, account.id, { expiresAt: Date.now() - 1000 });
    const res = await apiClient(t.app, key.key).post('/api/events', { type: 'visit', leadId: 'ld_x' });
    assertError(res, 403, 'Forbidden', 'API key has expired');
  });

  test('a key whose expiry is in the future works', async () => {
    const account = await makeAccount(t.db);
    const leadId = (await makeContact(t.db, account.id)).id;
    const key = await makeKey(t.db, t.config, account.id, { expiresAt: Date.now() + 3_600_000 });
    const res = await apiClient(t.app, key.key).post('/api/events', { type: 'visit', leadId });
    assertEventStored(res, leadId);
  });

  test('a key without the endpoint scope answers 403 API key does not have the required permissions', async () => {
    const { key } = await tenantWithContact(['leads:write', 'leads:read', 'campaigns:trigger']);
    const res = await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId: 'ld_x' });
    assertMissingScope(res, 'events:write');
  });

  test('a key with only the endpoint scope works', async () => {
    const { key, leadId } = await tenantWithContact(['events:write']);
    assertEventStored(await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId }), leadId);
  });

  test('an inactive key is refused before its missing scope is looked at', async () => {
    const account = await makeAccount(t.db);
    const key = await makeKey(t.db, t.config, account.id, { active: false, scopes: ['leads:write'] });
    const res = await apiClient(t.app, key.key).post('/api/events', { type: 'visit', leadId: 'ld_x' });
    assertError(res, 403, 'Forbidden', 'API key is not active');
  });
});

describe('where the key is read from', () => {
  test('x-service-api-key header works', async () => {
    const { key, leadId } = await tenantWithContact();
    assertEventStored(await apiClient(t.app).post('/api/events', { type: 'visit', leadId }, { 'x-service-api-key': key }), leadId);
  });

  test('Authorization: Bearer <key> works', async () => {
    const { key, leadId } = await tenantWithContact();
    assertEventStored(await apiClient(t.app).post('/api/events', { type: 'visit', leadId }, { authorization: `Bearer ${key}` }), leadId);
  });

  test('an unknown Bearer key answers 404 API key not found', async () => {
    const res = await apiClient(t.app).post('/api/events', { type: 'visit', leadId: 'ld_x' }, { authorization: 'Bearer hk_nope' });
    assertError(res, 404, 'Not Found', 'API key not found');
  });

  test('the api-key query parameter works on POST', async () => {
    const { key, leadId } = await tenantWithContact();
    assertEventStored(await apiClient(t.app).post(`/api/events?api-key=${key}`, { type: 'visit', leadId }), leadId);
  });

  test('header wins over query: valid header with a bogus query key works', async () => {
    const { key, leadId } = await tenantWithContact();
    const res = await apiClient(t.app).post('/api/events?api-key=hk_bogus', { type: 'visit', leadId }, { 'x-service-api-key': key });
    assertEventStored(res, leadId);
  });

  test('header wins over query: bogus header with a valid query key answers 404', async () => {
    const { key, leadId } = await tenantWithContact();
    const res = await apiClient(t.app).post(`/api/events?api-key=${key}`, { type: 'visit', leadId }, { 'x-service-api-key': 'hk_bogus' });
    assertError(res, 404, 'Not Found', 'API key not found');
  });

  test('Bearer wins over query: bogus Bearer with a valid query key answers 404', async () => {
    const { key, leadId } = await tenantWithContact();
    const res = await apiClient(t.app).post(`/api/events?api-key=${key}`, { type: 'visit', leadId }, { authorization: 'Bearer hk_bogus' });
    assertError(res, 404, 'Not Found', 'API key not found');
  });
});

describe('changes to a key reach the running app within 1 second', () => {
  /** Calls until the answer is a refusal or `limitMs` passes; returns the last answer and when it came. */
  async function pollUntilRefused(key: string, leadId: string, limitMs = 1500) {
    const started = Date.now();
    for (;;) {
      const res = await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId });
      const elapsed = Date.now() - started;
      if (res.status !== 200 || elapsed > limitMs) return { res, elapsed };
      await sleep(50);
    }
  }

  test('a key switched off is refused within 1 s', async () => {
    const { accountId, keyId, key, leadId } = await tenantWithContact();
    // Warm the app's key cache, so the test covers a cached key going stale.
    assertEventStored(await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId }), leadId);
    await updateKey(t.db, accountId, keyId, { active: false });
    const { res, elapsed } = await pollUntilRefused(key, leadId);
    assertError(res, 403, 'Forbidden', 'API key is not active');
    assert.ok(elapsed <= 1000, `refused only after ${elapsed} ms`);
  });

  test('a key that loses the scope is refused within 1 s', async () => {
    const { accountId, keyId, key, leadId } = await tenantWithContact();
    assertEventStored(await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId }), leadId);
    await updateKey(t.db, accountId, keyId, { scopes: ['leads:write'] });
    const { res, elapsed } = await pollUntilRefused(key, leadId);
    assertMissingScope(res, 'events:write');
    assert.ok(elapsed <= 1000, `refused only after ${elapsed} ms`);
  });

  test('a key reaching its expiry while in use is refused within 1 s', async () => {
    const account = await makeAccount(t.db);
    const leadId = (await makeContact(t.db, account.id)).id;
    const expiresAt = Date.now() + 400;
    const { key } = await makeKey(t.db, t.config, account.id, { expiresAt });
    assertEventStored(await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId }), leadId);
    const { res } = await pollUntilRefused(key, leadId);
    assertError(res, 403, 'Forbidden', 'API key has expired');
    assert.ok(Date.now() - expiresAt <= 1000, `refused only ${Date.now() - expiresAt} ms after expiry`);
  });

  test('an expiry set on a key in use is applied within 1 s', async () => {
    const { accountId, keyId, key, leadId } = await tenantWithContact();
    assertEventStored(await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId }), leadId);
    await updateKey(t.db, accountId, keyId, { expiresAt: Date.now() - 1 });
    const { res, elapsed } = await pollUntilRefused(key, leadId);
    assertError(res, 403, 'Forbidden', 'API key has expired');
    assert.ok(elapsed <= 1000, `refused only after ${elapsed} ms`);
  });
});

describe('failed key look-ups are throttled per client address (decisions.md, Hardening)', () => {
  let n = 0;
  const address = () => `198.51.100.${++n}`;
  const guess = () => generateKeyValue();
  const from = (remoteAddress: string, key: string, leadId = 'ld_none') =>
    apiClient(t.app).call({
      method: 'POST',
      url: '/api/events',
      payload: { type: 'visit', leadId },
      headers: { 'x-service-api-key': key },
      remoteAddress,
    });

  test('20 unknown keys answer 404, the 21st answers 429 with Retry-After; other addresses and known keys are not slowed', async () => {
    const guesser = address();
    const { key, leadId } = await tenantWithContact();
    assertEventStored(await from(guesser, key, leadId), leadId);
    for (let i = 0; i < 20; i++) assertError(await from(guesser, guess()), 404, 'Not Found', 'API key not found');
    const refused = await from(guesser, guess());
    assertError(refused, 429, 'Too Many Requests', 'Too Many Requests');
    const wait = Number(refused.headers['retry-after']);
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 2, `Retry-After in whole seconds: ${String(refused.headers['retry-after'])}`);
    // The valid key used from the same address still works, again and again.
    for (let i = 0; i < 3; i++) assertEventStored(await from(guesser, key, leadId), leadId);
    // Another address is not affected.
    assertError(await from(address(), guess()), 404, 'Not Found', 'API key not found');
  });

  test('of 100 concurrent guesses from one address, 20 are looked up and 80 answer 429', async () => {
    const guesser = address();
    const answers = await Promise.all(Array.from({ length: 100 }, () => from(guesser, guess())));
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 404).length, 20);
    assert.equal(statuses.filter((s) => s === 429).length, 80);
  });

  test('requests with a valid key never use up the address allowance', async () => {
    const client = address();
    const { key, leadId } = await tenantWithContact();
    for (let i = 0; i < 30; i++) assertEventStored(await from(client, key, leadId), leadId);
    await sleep(600); // past the key cache: each request below looks the key up again
    assertEventStored(await from(client, key, leadId), leadId);
    for (let i = 0; i < 20; i++) assertError(await from(client, guess()), 404, 'Not Found', 'API key not found');
  });
});

test('a burst of 100 concurrent calls with a valid key not looked up yet all pass the key check', async () => {
  const { key, leadId } = await tenantWithContact();
  const answers = await Promise.all(
    Array.from({ length: 100 }, () =>
      apiClient(t.app).call({
        method: 'POST',
        url: '/api/events',
        payload: { type: 'visit', leadId },
        headers: { 'x-service-api-key': key },
        remoteAddress: '198.51.100.250',
      }),
    ),
  );
  assert.deepEqual([...new Set(answers.map((r) => r.status))], [200]);
});
