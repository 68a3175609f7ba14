import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createHeraldClient,
  HeraldApiError,
  type HeraldClient,
  type HeraldClientOptions,
  parseRetryAfter,
} from '../../client/src/index.js';
import { makeEmailCampaign, makeTenant, randomEmail } from '../helpers/factories.js';
import { startService, type TestService } from '../helpers/harness.js';
import { type FlakyProxy, startFlakyProxy } from './flaky-proxy.js';

/**
 * The TypeScript client (client/) against a real running Herald on a socket. Between them, a
 * proxy plays the outside world: it forwards, or breaks the attempts a test tells it to.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
// Retries as the client makes them, without the default backoff's waits.
const FAST: Partial<HeraldClientOptions> = { baseDelayMs: 1, maxDelayMs: 5 };

describe('TypeScript client against a running Herald', () => {
  let t: TestService;
  let proxy: FlakyProxy;
  before(async () => {
    t = await startService({ listen: true, role: 'api', logLevel: 'warn' });
    proxy = await startFlakyProxy(t.baseUrl!);
  });
  after(async () => {
    await proxy?.close();
    await t?.close();
  });

  async function tenantClient(options: Partial<HeraldClientOptions> = {}) {
    proxy.reset();
    const tenant = await makeTenant(t.db, t.config);
    const client = createHeraldClient({ baseUrl: proxy.url, apiKey: tenant.key, ...FAST, ...options });
    return { ...tenant, client };
  }

  test('every operation, typed: lead, event, delayed trigger, cancel (POST and GET forms)', async () => {
    const { accountId, key, client } = await tenantClient();
    const campaign = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
    const email = randomEmail();

    const lead = await client.upsertLead({ name: 'Ada', email, tags: ['vip'] });
    assert.equal(lead.created, true);
    assert.match(lead.id, /^ld_/);
    assert.equal(lead.email, email);

    const event = await client.recordEvent({ type: 'signup', leadId: lead.id });
    assert.deepEqual({ leadId: event.leadId, type: event.type }, { leadId: lead.id, type: 'signup' });

    const triggered = await client.trigger({ campaignId: campaign.id, lead: email });
    assert.deepEqual(
      { campaignId: triggered.campaignId, leadId: triggered.leadId, mode: triggered.mode, status: triggered.status },
      { campaignId: campaign.id, leadId: lead.id, mode: 'delay', status: 'pending' },
    );

    const cancelled = await client.cancel({ campaignId: campaign.id, lead: lead.id });
    assert.deepEqual(cancelled, { cancelled: true, campaignId: campaign.id, leadId: lead.id });
    // The generic GET, typed from the generated paths: nothing is pending any more.
    const again = await client.get('/api/campaigns/cancel', { campaignId: campaign.id, lead: lead.id });
    assert.equal(again.cancelled, false);

    // Compile-time checks (npm run lint type-checks this file): the generated paths refuse an unknown path and a wrong body.
    const refused = (c: HeraldClient) => [
      // @ts-expect-error not an operation of the document
      () => c.post('/api/nope', {}),
      // @ts-expect-error campaignId is a string
      () => c.trigger({ campaignId: 1, lead: 'x' }),
    ];
    assert.equal(refused(client).length, 2);

    // On the wire: the key in its header on every call and in no URL; one fresh Idempotency-Key per POST.
    assert.equal(proxy.seen.length, 5);
    for (const r of proxy.seen) {
      assert.equal(r.headers['x-service-api-key'], key);
      assert.equal(r.headers.authorization, undefined);
      assert.ok(!decodeURIComponent(r.url).includes(key), `no key in ${r.url}`);
      assert.ok(!r.url.includes('api-key'), `no api-key parameter in ${r.url}`);
    }
    const posts = proxy.seen.filter((r) => r.method === 'POST');
    assert.equal(posts.length, 4);
    for (const r of posts) assert.match(String(r.headers['idempotency-key']), UUID);
    assert.equal(new Set(posts.map((r) => r.headers['idempotency-key'])).size, 4, 'each call has its own key');
    assert.equal(proxy.seen.find((r) => r.method === 'GET')!.headers['idempotency-key'], undefined);
  });

  test('a 5xx is retried with the same Idempotency-Key until Herald answers', async () => {
    const { client } = await tenantClient();
    proxy.fail(503, 500);
    const email = randomEmail();
    const lead = await client.upsertLead({ name: 'Retried', email });
    assert.equal(lead.created, true);
    assert.deepEqual(
      proxy.seen.map((r) => r.outcome),
      [503, 500, 'forwarded'],
    );
    const keys = new Set(proxy.seen.map((r) => r.headers['idempotency-key']));
    assert.equal(keys.size, 1, 'one key for the three attempts');
    assert.match(String([...keys][0]), UUID);
    // The body went again on the retry: the same contact, found and not created by a second call.
    assert.equal((await client.upsertLead({ email })).id, lead.id);
  });

  test('a broken connection is retried with the same Idempotency-Key', async () => {
    const { client } = await tenantClient();
    proxy.fail('reset', 'reset');
    const lead = await client.upsertLead({ name: 'Reset', email: randomEmail() });
    assert.equal(lead.created, true);
    assert.deepEqual(
      proxy.seen.map((r) => r.outcome),
      ['reset', 'reset', 'forwarded'],
    );
    assert.equal(new Set(proxy.seen.map((r) => r.headers['idempotency-key'])).size, 1);
  });

  test('the caller may give its own Idempotency-Key; it too is kept across retries', async () => {
    const { client } = await tenantClient();
    proxy.fail(502);
    await client.upsertLead({ name: 'Own key', email: randomEmail() }, { idempotencyKey: 'order-1234' });
    assert.deepEqual(
      proxy.seen.map((r) => r.headers['idempotency-key']),
      ['order-1234', 'order-1234'],
    );
  });

  test('after the last retry the 5xx is thrown as a HeraldApiError', async () => {
    const { client } = await tenantClient({ retries: 2 });
    proxy.fail(503, 503, 503);
    const err = await client.upsertLead({ name: 'Down', email: randomEmail() }).catch((e: unknown) => e);
    assert.ok(err instanceof HeraldApiError);
    assert.equal(err.status, 503);
    assert.equal(err.message, 'the proxy answered 503');
    assert.equal(proxy.seen.length, 3, 'the first attempt and 2 retries');
  });

  test('a network error that outlasts the retries is thrown as it is (fetch TypeError)', async () => {
    const { client } = await tenantClient({ retries: 1 });
    proxy.fail('reset', 'reset');
    await assert.rejects(client.recordEvent({ type: 'visit', leadId: 'ld_x' }), TypeError);
    assert.equal(proxy.seen.length, 2);
  });

  test('a 400 is not retried: Herald’s exact message and details come back typed', async () => {
    const { client } = await tenantClient();
    // A body the types refuse, sent anyway (as untyped JavaScript callers would).
    const err = await client.recordEvent({ leadId: 'ld_x' } as never).catch((e: unknown) => e);
    assert.ok(err instanceof HeraldApiError);
    assert.deepEqual(
      { status: err.status, error: err.error, message: err.message },
      { status: 400, error: 'Bad Request', message: 'Validation Error' },
    );
    assert.ok(err.details.length > 0, 'details name the offending fields');
    assert.ok(
      err.details.some((d) => d.path === '/type'),
      JSON.stringify(err.details),
    );
    assert.equal(proxy.seen.length, 1, 'no retry');
  });

  test('a 404 is not retried', async () => {
    const { client } = await tenantClient();
    const err = await client.trigger({ campaignId: 'cmp_missing', lead: randomEmail() }).catch((e: unknown) => e);
    assert.ok(err instanceof HeraldApiError);
    assert.deepEqual(
      { status: err.status, error: err.error, message: err.message },
      { status: 404, error: 'Not Found', message: 'Campaign not found' },
    );
    assert.ok(err.requestId, 'the request id, for Herald’s logs');
    assert.equal(proxy.seen.length, 1);
  });

  test('an unknown key is a 404, not retried', async () => {
    proxy.reset();
    const client = createHeraldClient({ baseUrl: proxy.url, apiKey: 'hk_not_a_key', ...FAST });
    const err = await client.upsertLead({ name: 'X', email: randomEmail() }).catch((e: unknown) => e);
    assert.ok(err instanceof HeraldApiError);
    assert.deepEqual({ status: err.status, message: err.message }, { status: 404, message: 'API key not found' });
    assert.equal(proxy.seen.length, 1);
  });

  test('the key never goes in a URL: an api-key parameter or a base URL with a query is refused before sending', async () => {
    const { key, client } = await tenantClient();
    await assert.rejects(
      client.get('/api/campaigns/cancel', { campaignId: 'c', lead: 'l', 'api-key': key } as never),
      /the API key goes in the x-service-api-key header/,
    );
    assert.equal(proxy.seen.length, 0);
    assert.throws(() => createHeraldClient({ baseUrl: `${proxy.url}/?api-key=${key}`, apiKey: key }), /must not carry a query/);
    assert.throws(() => createHeraldClient({ baseUrl: proxy.url, apiKey: '' }), /apiKey is required/);
  });
});

describe('TypeScript client and the real rate limit (burst 2, 1 per second)', () => {
  let t: TestService;
  before(async () => {
    t = await startService({ listen: true, role: 'api', logLevel: 'warn', env: { RATE_LIMIT_BURST: '2', RATE_LIMIT_PER_SECOND: '1' } });
  });
  after(async () => {
    await t?.close();
  });

  /** A client whose fetch notes each attempt's status, Retry-After and Idempotency-Key. */
  async function watchedClient(options: Partial<HeraldClientOptions> = {}) {
    const { key } = await makeTenant(t.db, t.config);
    const attempts: { status: number; retryAfter: string | null; idempotencyKey: string | null; at: number }[] = [];
    const client = createHeraldClient({
      baseUrl: t.baseUrl!,
      apiKey: key,
      ...options,
      fetch: async (request) => {
        const response = await fetch(request);
        attempts.push({
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          idempotencyKey: request.headers.get('idempotency-key'),
          at: Date.now(),
        });
        return response;
      },
    });
    return { client, attempts };
  }

  test('a 429 is retried after its Retry-After, with the same Idempotency-Key', async () => {
    const { client, attempts } = await watchedClient();
    await client.upsertLead({ name: 'One', email: randomEmail() });
    await client.upsertLead({ name: 'Two', email: randomEmail() });
    const lead = await client.upsertLead({ name: 'Three', email: randomEmail() });
    assert.equal(lead.created, true);
    assert.deepEqual(
      attempts.map((a) => a.status),
      [200, 200, 429, 200],
    );
    const [, , limited, retried] = attempts;
    assert.equal(limited.retryAfter, '1');
    assert.ok(retried.at - limited.at >= 950, `waited ${retried.at - limited.at} ms for Retry-After: 1`);
    assert.equal(retried.idempotencyKey, limited.idempotencyKey);
  });

  test('a Retry-After beyond maxRetryAfterMs is not waited for: the 429 is thrown', async () => {
    const { client, attempts } = await watchedClient({ maxRetryAfterMs: 500 });
    await client.upsertLead({ name: 'One', email: randomEmail() });
    await client.upsertLead({ name: 'Two', email: randomEmail() });
    const err = await client.upsertLead({ name: 'Three', email: randomEmail() }).catch((e: unknown) => e);
    assert.ok(err instanceof HeraldApiError);
    assert.deepEqual({ status: err.status, message: err.message }, { status: 429, message: 'Too Many Requests' });
    assert.equal(attempts.length, 3);
  });
});

describe('Retry-After', () => {
  test('delay-seconds and HTTP dates; anything else is unreadable', () => {
    const now = Date.parse('2026-11-25T20:00:00Z');
    assert.equal(parseRetryAfter('3', now), 3000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Wed, 25 Nov 2026 20:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Wed, 25 Nov 2026 19:00:00 GMT', now), 0, 'a date in the past: now');
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter('-1', now), undefined);
    assert.equal(parseRetryAfter(null, now), undefined);
  });
});
