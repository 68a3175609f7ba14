import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { redactUrl } from '../../src/http/logger.js';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeContact, makeTenant } from '../helpers/factories.js';

/** decisions.md, API keys: a key value is never logged, wherever the request carried it. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});
beforeEach(() => {
  t.logs.length = 0;
});

interface LogLine {
  requestId?: string;
  msg?: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
}
const parsed = (): LogLine[] => t.logs.map((line) => JSON.parse(line) as LogLine);

function assertNotLogged(secret: string): void {
  assert.ok(t.logs.length > 0, 'the app logged something');
  const leaking = t.logs.filter((line) => line.includes(secret));
  assert.deepEqual(leaking, [], 'no log line holds the key value');
}

/** The "incoming request" line of the request answered with `requestId`. */
function incoming(requestId: unknown): LogLine {
  const line = parsed().find((l) => l.requestId === requestId && l.req);
  assert.ok(line, `request ${String(requestId)} is logged: ${t.logs.join('')}`);
  return line;
}

describe('key values never reach the log', () => {
  test('?api-key=<key> on a successful call: the request is logged with the key redacted', async () => {
    const { key, accountId } = await makeTenant(t.db, t.config);
    const leadId = (await makeContact(t.db, accountId)).id;
    const res = await apiClient(t.app).post(`/api/events?api-key=${key}&source=test`, { type: 'visit', leadId });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assertNotLogged(key);
    const line = incoming(res.headers['x-request-id']);
    assert.equal(line.req?.method, 'POST');
    assert.equal(line.req?.url, '/api/events?api-key=[REDACTED]&source=test');
    assert.ok(
      parsed().some((l) => l.requestId === res.headers['x-request-id'] && l.res?.statusCode === 200),
      'the outcome is logged',
    );
  });

  test('?api-key=<key> on refused calls (404 path, 405, 400, 404 lead) is not logged either', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const client = apiClient(t.app);
    const statuses = [
      (await client.get(`/nowhere?api-key=${key}`)).status,
      (await client.get(`/api/events?api-key=${key}`)).status,
      (
        await client.call({
          method: 'POST',
          url: `/api/events?api-key=${key}`,
          payload: '{',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
      (await client.post(`/api/events?api-key=${key}`, { type: 'visit', leadId: 'ld_none' })).status,
    ];
    assert.deepEqual(statuses, [404, 405, 400, 404]);
    assertNotLogged(key);
  });

  test('a query key whose name is percent-encoded is redacted too (the app still reads it)', async () => {
    const { key, accountId } = await makeTenant(t.db, t.config);
    const leadId = (await makeContact(t.db, accountId)).id;
    const res = await apiClient(t.app).post(`/api/events?%61pi%2Dkey=${key}`, { type: 'visit', leadId });
    assert.equal(res.status, 200, 'the encoded name is read as api-key');
    assertNotLogged(key);
  });

  test('a key sent twice in the query is redacted in both places', async () => {
    const { key } = await makeTenant(t.db, t.config);
    await apiClient(t.app).post(`/api/events?api-key=${key}&api-key=${key}`, { type: 'visit', leadId: 'ld_none' });
    assertNotLogged(key);
  });

  test('the x-service-api-key header value is not logged', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId: 'ld_none' });
    assert.equal(res.status, 404);
    assertNotLogged(key);
    incoming(res.headers['x-request-id']);
  });

  test('an Authorization: Bearer value is not logged', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app).post('/api/events', { type: 'visit', leadId: 'ld_none' }, { authorization: `Bearer ${key}` });
    assert.equal(res.status, 404);
    assertNotLogged(key);
    incoming(res.headers['x-request-id']);
  });

  test('an unknown key value is not logged either', async () => {
    const guess = `hk_${'Z'.repeat(32)}`;
    const res = await apiClient(t.app).post(
      `/api/events?api-key=${guess}`,
      { type: 'visit' },
      { 'x-service-api-key': guess, authorization: `Bearer ${guess}` },
    );
    assert.equal(res.status, 404);
    assertNotLogged(guess);
  });

  test('a key in the query of a malformed URL is not logged', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app).get(`/api/%zz?api-key=${key}`);
    assert.equal(res.status, 400);
    assertNotLogged(key);
  });
});

describe('a key is redacted by its shape, whatever name or spelling carries it (LOG_LEVEL=debug)', () => {
  const spellings: [string, (key: string) => string][] = [
    ['an HTML-escaped & before api-key', (key) => `/api/events?source=x&amp;api-key=${key}`],
    ['api-key[]', (key) => `/api/events?api-key[]=${key}`],
    ['api-key%5B%5D', (key) => `/api/events?api-key%5B%5D=${key}`],
    ['a ; separator', (key) => `/api/events?source=x;api-key=${key}`],
    ['an escaped underscore (hk%5F)', (key) => `/api/events?api-key=${key.replace('_', '%5F')}`],
    ['an escaped underscore in lower case (hk%5f)', (key) => `/api/events?api-key=${key.replace('_', '%5f')}`],
    ['the prefix escaped letter by letter', (key) => `/api/events?api-key=%68%6B%5F${key.slice(3)}`],
    ['escaped twice (hk%255F)', (key) => `/api/events?api-key=${key.replace('_', '%255F')}`],
    ['a letter of the key escaped', (key) => `/api/events?api-key=${key.slice(0, 10)}%${key.charCodeAt(10).toString(16)}${key.slice(11)}`],
    ['another parameter name', (key) => `/api/events?token=${key}`],
    ['the path', (key) => `/api/leads/${key}`],
    ['an escaped # (%23)', (key) => `/api/events?x=1%23api-key=${key}`],
  ];
  for (const [name, url] of spellings) {
    test(name, async () => {
      const { key } = await makeTenant(t.db, t.config);
      const res = await apiClient(t.app).get(url(key));
      assert.ok(res.status >= 400, `${res.status}`);
      const line = incoming(res.headers['x-request-id']);
      assert.match(line.req!.url, /\[REDACTED\]/);
      assertNotLogged(key);
      assertNotLogged(key.slice(3));
    });
  }

  test('a key (or a panel session cookie) in any logged field, message or error is cut from the written line', async () => {
    const { createLogger } = await import('../../src/http/logger.js');
    const { key } = await makeTenant(t.db, t.config);
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
    logger
      .child({ component: 'test' })
      .debug({ headers: { 'x-api-key': key, 'x-other': `Bearer ${key.replace('_', '%5F')}` } }, `called with ${key}`);
    logger.error({ err: new Error(`bad key ${key}`) }, 'failed');
    logger.warn({ cookie: `theme=dark; herald_session=${key.slice(3)}; x=1` }, 'a panel request');
    assert.equal(lines.length, 3);
    for (const line of lines) {
      assert.ok(!line.includes(key.slice(3)), line);
      assert.match(line, /\[REDACTED\]/);
    }
  });
});

describe('redactUrl', () => {
  test('cuts the value of api-key wherever it sits, and nothing else', () => {
    assert.equal(redactUrl('/api/events?api-key=hk_abc'), '/api/events?api-key=[REDACTED]');
    assert.equal(redactUrl('/a?x=1&api-key=hk_abc&y=2'), '/a?x=1&api-key=[REDACTED]&y=2');
    assert.equal(redactUrl('/a?api-key=k1&api-key=k2'), '/a?api-key=[REDACTED]&api-key=[REDACTED]');
    assert.equal(redactUrl('/a?API-KEY=hk_abc'), '/a?API-KEY=[REDACTED]');
    assert.equal(redactUrl('/a?%61pi%2dkey=hk_abc'), '/a?%61pi%2dkey=[REDACTED]');
    assert.equal(redactUrl('/a?my-api-key=x&api-keys=y'), '/a?my-api-key=x&api-keys=y');
    assert.equal(redactUrl('/api/events'), '/api/events');
  });

  test('cuts any key-shaped value, and leaves other values alone', () => {
    assert.equal(redactUrl('/a?x=1&amp;api-key=hk_abc&y=2'), '/a?x=1&amp;api-key=[REDACTED]&y=2');
    assert.equal(redactUrl('/a?api-key[]=hk_abc'), '/a?api-key[]=[REDACTED]');
    assert.equal(redactUrl('/a?x=1;api-key=hk_abc'), '/a?x=1;api-key=[REDACTED]');
    assert.equal(redactUrl('/a?k=hk%5Fabc&v=hook_1'), '/a?k=[REDACTED]&v=hook_1');
    assert.equal(redactUrl('/a/hk_abc/b'), '/a/[REDACTED]/b');
  });
});
