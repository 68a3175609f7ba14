import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { type ApiResponse, apiClient, assertApiError as assertError, startTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeKey, makeTenant } from '../helpers/factories.js';

/** The per-key rate limit of decisions.md (Limits the spec leaves open). */

/** An event call that passes the key check and the rate limit, then stops at the contact look-up. */
const call = (t: TestApp, key: string) => apiClient(t.app, key).post('/api/events', { type: 'visit', leadId: 'ld_missing' });
const passed = (res: ApiResponse) => res.status === 404 && res.body.message === 'Lead not found';

describe('rate limit over HTTP (burst 3, 1 per second)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_SECOND: '1' });
  });
  after(async () => {
    await t.close();
  });

  test('the 4th quick request answers 429 Too Many Requests with Retry-After in whole seconds', async () => {
    const { key } = await makeTenant(t.db, t.config);
    for (let i = 1; i <= 3; i++) {
      const res = await call(t, key);
      assert.ok(passed(res), `request ${i}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const res = await call(t, key);
    assertError(res, 429, 'Too Many Requests', 'Too Many Requests');
    const retryAfter = String(res.headers['retry-after']);
    assert.match(retryAfter, /^\d+$/, 'Retry-After is a whole number of seconds');
    assert.equal(Number(retryAfter), 1, 'one token comes back within 1 s at 1/s');
    assert.ok(res.headers['x-request-id'], 'a 429 carries x-request-id too');
  });

  test('another key is not affected by a key that is limited', async () => {
    const busy = await makeTenant(t.db, t.config);
    const other = await makeTenant(t.db, t.config);
    for (let i = 0; i < 4; i++) await call(t, busy.key);
    assert.equal((await call(t, busy.key)).status, 429);
    for (let i = 1; i <= 3; i++) assert.ok(passed(await call(t, other.key)), `other key, request ${i}`);
  });

  test('a second key of the same account has its own bucket', async () => {
    const { accountId, key } = await makeTenant(t.db, t.config);
    const second = await makeKey(t.db, t.config, accountId);
    for (let i = 0; i < 4; i++) await call(t, key);
    assert.equal((await call(t, key)).status, 429);
    assert.ok(passed(await call(t, second.key)));
  });

  test('the limit is checked before the body is read: a limited key with invalid JSON gets 429', async () => {
    const { key } = await makeTenant(t.db, t.config);
    for (let i = 0; i < 3; i++) await call(t, key);
    const res = await apiClient(t.app, key).call({
      method: 'POST',
      url: '/api/events',
      payload: '{',
      headers: { 'content-type': 'application/json' },
    });
    assertError(res, 429, 'Too Many Requests', 'Too Many Requests');
  });

  test('key errors come before the limit: an inactive key is told so, never 429', async () => {
    const account = await makeAccount(t.db);
    const { key } = await makeKey(t.db, t.config, account.id, { active: false });
    for (let i = 0; i < 5; i++) assertError(await call(t, key), 403, 'Forbidden', 'API key is not active');
  });

  test('a limited key is served again once Retry-After has passed', async () => {
    const { key } = await makeTenant(t.db, t.config);
    for (let i = 0; i < 3; i++) await call(t, key);
    const limited = await call(t, key);
    assert.equal(limited.status, 429);
    await new Promise((resolve) => setTimeout(resolve, Number(limited.headers['retry-after']) * 1000 + 50));
    assert.ok(passed(await call(t, key)));
  });
});

describe('RateLimiter', () => {
  test('allows the burst at once, then refuses with the seconds to wait', () => {
    const limiter = new RateLimiter(1, 3);
    assert.deepEqual(
      [0, 1, 2].map(() => limiter.take('k', 1_000)),
      [0, 0, 0],
    );
    assert.equal(limiter.take('k', 1_000), 1);
  });

  test('refills at perSecond: one token after 1 s, not before', () => {
    const limiter = new RateLimiter(1, 3);
    for (let i = 0; i < 3; i++) limiter.take('k', 0);
    assert.ok(limiter.take('k', 999) > 0, 'no token 999 ms later');
    assert.equal(limiter.take('k', 1_000), 0, 'one token 1 s later');
    assert.ok(limiter.take('k', 1_000) > 0, 'and only one');
  });

  test('refills at a higher rate proportionally', () => {
    const limiter = new RateLimiter(10, 10);
    for (let i = 0; i < 10; i++) assert.equal(limiter.take('k', 0), 0);
    assert.ok(limiter.take('k', 0) > 0);
    // 500 ms at 10/s gives 5 tokens.
    assert.deepEqual(
      Array.from({ length: 6 }, () => limiter.take('k', 500)),
      [0, 0, 0, 0, 0, 1],
    );
  });

  test('never holds more than the burst, however long it was idle', () => {
    const limiter = new RateLimiter(1, 3);
    limiter.take('k', 0);
    const later = 3_600_000;
    assert.deepEqual(
      Array.from({ length: 4 }, () => limiter.take('k', later)),
      [0, 0, 0, 1],
    );
  });

  test('Retry-After is the whole seconds until one token is back, at least 1', () => {
    const limiter = new RateLimiter(1, 1);
    assert.equal(limiter.take('k', 0), 0);
    assert.equal(limiter.take('k', 0), 1);
    assert.equal(limiter.take('k', 600), 1, '400 ms left rounds up to 1 s');
    const slow = new RateLimiter(1, 5);
    for (let i = 0; i < 5; i++) slow.take('k', 0);
    assert.equal(slow.take('k', 0), 1);
  });

  test('a refused request does not use up a token', () => {
    const limiter = new RateLimiter(1, 1);
    limiter.take('k', 0);
    for (let i = 0; i < 10; i++) limiter.take('k', 500);
    assert.equal(limiter.take('k', 1_000), 0, 'refusals at 500 ms did not push the next token back');
  });

  test('buckets are per key', () => {
    const limiter = new RateLimiter(1, 1);
    assert.equal(limiter.take('a', 0), 0);
    assert.equal(limiter.take('a', 0), 1);
    assert.equal(limiter.take('b', 0), 0);
  });

  test('dropping idle buckets never grants more than the burst', () => {
    const limiter = new RateLimiter(1, 2);
    limiter.take('a', 0);
    limiter.take('a', 0);
    // Long enough for the sweep to drop 'a'; it comes back full, which is what it would hold anyway.
    assert.deepEqual([limiter.take('a', 10_000), limiter.take('a', 10_000), limiter.take('a', 10_000)], [0, 0, 1]);
  });
});
