import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { type ApiResponse, apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeKey, makeTenant, randomEmail } from '../helpers/factories.js';

/**
 * RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (the IETF draft's fields) on every
 * answer to a request whose key is known, success and error alike (docs/decisions.md, Rate
 * limit headers): limit = the burst, remaining = whole tokens left, reset = seconds until full.
 */

const quota = (res: ApiResponse) => ({
  limit: res.headers['ratelimit-limit'],
  remaining: res.headers['ratelimit-remaining'],
  reset: res.headers['ratelimit-reset'],
});

describe('RateLimit-* headers over HTTP (burst 3, 1 per second)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_SECOND: '1' });
  });
  after(async () => {
    await t.close();
  });

  test('a success, an error and the 429 each state the quota left after them', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const api = apiClient(t.app, key);
    const created = await api.post('/api/leads', { email: randomEmail(), name: 'Ada Lovelace' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.deepEqual(quota(created), { limit: '3', remaining: '2', reset: '1' });

    const missing = await api.post('/api/events', { type: 'visit', leadId: 'ld_missing' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'LEAD_NOT_FOUND');
    assert.equal(missing.headers['ratelimit-limit'], '3');
    assert.equal(missing.headers['ratelimit-remaining'], '1');

    const invalid = await api.get('/api/campaigns/trigger?campaignId=cmp_x');
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.code, 'VALIDATION_ERROR');
    assert.equal(invalid.headers['ratelimit-remaining'], '0');

    const limited = await api.post('/api/events', { type: 'visit', leadId: 'ld_missing' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMITED');
    assert.equal(limited.headers['retry-after'], '1', 'Retry-After stays: one token in 1 s');
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    const reset = Number(limited.headers['ratelimit-reset']);
    assert.ok(reset >= 2 && reset <= 3, `the bucket is full again within 3 s at 1/s: ${reset}`);
  });

  test('a key refused for its state or scope is told its quota, and spends none of it', async () => {
    const account = await makeAccount(t.db);
    const inactive = await makeKey(t.db, t.config, account.id, { active: false });
    for (let i = 0; i < 4; i++) {
      const res = await apiClient(t.app, inactive.key).post('/api/events', { type: 'visit', leadId: 'ld_x' });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'API_KEY_INACTIVE');
      assert.deepEqual(quota(res), { limit: '3', remaining: '3', reset: '0' });
    }
    const narrow = await makeKey(t.db, t.config, account.id, { scopes: ['events:write'] });
    const res = await apiClient(t.app, narrow.key).post('/api/leads', { email: randomEmail(), name: 'Ada' });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'API_KEY_FORBIDDEN');
    assert.equal(res.headers['ratelimit-remaining'], '3');
  });

  test('no key, a value that is no key, and routes without keys carry no quota', async () => {
    const none = await apiClient(t.app).post('/api/events', { type: 'visit', leadId: 'ld_x' });
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'API_KEY_REQUIRED');
    const unknown = await apiClient(t.app, 'hk_not_a_key').post('/api/events', { type: 'visit', leadId: 'ld_x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'API_KEY_NOT_FOUND');
    const health = await apiClient(t.app).get('/healthz');
    for (const res of [none, unknown, health]) assert.deepEqual(quota(res), { limit: undefined, remaining: undefined, reset: undefined });
  });
});

describe('RateLimiter.quota', () => {
  test('an unseen key has a full bucket; each token taken shows, and refills show as reset', () => {
    const limiter = new RateLimiter(2, 4);
    assert.deepEqual(limiter.quota('k', 0), { limit: 4, remaining: 4, reset: 0 });
    limiter.take('k', 0);
    assert.deepEqual(limiter.quota('k', 0), { limit: 4, remaining: 3, reset: 1 });
    for (let i = 0; i < 3; i++) limiter.take('k', 0);
    assert.deepEqual(limiter.quota('k', 0), { limit: 4, remaining: 0, reset: 2 });
    assert.deepEqual(limiter.quota('k', 500), { limit: 4, remaining: 1, reset: 2 });
    assert.deepEqual(limiter.quota('k', 2000), { limit: 4, remaining: 4, reset: 0 });
  });
});
