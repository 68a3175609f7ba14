import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { MAX_BODY_BYTES } from '../../src/app.js';
import {
  type ApiResponse,
  apiClient,
  assertApiError as assertError,
  assertMissingScope,
  startTestApp,
  type TestApp,
} from '../helpers/app.js';
import { makeContact, makeTenant } from '../helpers/factories.js';

/**
 * Error bodies, the order of checks (decisions.md, Error responses) and the answers of the
 * HTTP layer itself: unknown paths, wrong methods, request ids, unexpected failures.
 */

/** A 400 Validation Error whose details include an item at `path`; returns the details. */
function assertValidation(res: ApiResponse, path: string): { path: string; message: string }[] {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body).sort(), ['code', 'details', 'error', 'message', 'statusCode']);
  assert.equal(res.body.code, 'VALIDATION_ERROR');
  assert.equal(res.body.statusCode, 400);
  assert.equal(res.body.error, 'Bad Request');
  assert.equal(res.body.message, 'Validation Error');
  const details = res.body.details as { path: string; message: string }[];
  assert.ok(Array.isArray(details) && details.length > 0, 'details lists what is wrong');
  for (const item of details) {
    assert.equal(typeof item.path, 'string');
    assert.equal(typeof item.message, 'string');
    assert.ok(item.message.length > 0);
  }
  assert.ok(
    details.some((d) => d.path === path),
    `details name ${path}: ${JSON.stringify(details)}`,
  );
  return details;
}

const json = { 'content-type': 'application/json' };
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

describe('order of checks', () => {
  test('an unauthenticated request with an invalid JSON body gets the key error, not 400', async () => {
    const res = await apiClient(t.app).call({ method: 'POST', url: '/api/events', payload: '{"type": ', headers: json });
    assertError(res, 401, 'Unauthorized', 'API key is required');
  });

  test('an unknown key with an oversized body gets the key error, not 413', async () => {
    const payload = JSON.stringify({ type: 'x', value: 'a'.repeat(MAX_BODY_BYTES) });
    const res = await apiClient(t.app, 'hk_unknown').call({ method: 'POST', url: '/api/events', payload, headers: json });
    assertError(res, 404, 'Not Found', 'API key not found');
  });

  test('a key lacking the scope with an invalid JSON body gets 403', async () => {
    const { key } = await makeTenant(t.db, t.config, { scopes: ['leads:write'] });
    const res = await apiClient(t.app, key).call({ method: 'POST', url: '/api/events', payload: '{not json', headers: json });
    assertMissingScope(res, 'events:write');
  });

  test('a key lacking the scope with a text/plain body gets 403, not 415', async () => {
    const { key } = await makeTenant(t.db, t.config, { scopes: ['leads:write'] });
    const res = await apiClient(t.app, key).call({
      method: 'POST',
      url: '/api/events',
      payload: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    assertMissingScope(res, 'events:write');
  });

  test('invalid JSON answers 400 Invalid JSON body', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app, key).call({ method: 'POST', url: '/api/events', payload: '{"type": "visit",', headers: json });
    assertError(res, 400, 'Bad Request', 'Invalid JSON body');
  });

  test('an empty body declared as JSON answers 400 Invalid JSON body', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app, key).call({ method: 'POST', url: '/api/events', payload: '', headers: json });
    assertError(res, 400, 'Bad Request', 'Invalid JSON body');
  });

  test('a POST with no body at all names each required member, not the root', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const api = apiClient(t.app, key);
    const expected: [string, string[]][] = [
      ['/api/events', ['/type']],
      ['/api/campaigns/trigger', ['/campaignId', '/lead']],
      ['/api/leads', ['/name', '/email']],
    ];
    for (const [url, paths] of expected) {
      const details = assertValidation(await api.call({ method: 'POST', url }), paths[0]!);
      assert.deepEqual(
        details.map((d) => d.path),
        paths,
        url,
      );
    }
  });

  test('a JSON body that is not an object is refused as a whole', async () => {
    const { key } = await makeTenant(t.db, t.config);
    for (const payload of ['[]', '"visit"', '42', 'null']) {
      const res = await apiClient(t.app, key).call({ method: 'POST', url: '/api/events', payload, headers: json });
      assert.deepEqual(res.body.details, [{ path: '/', message: 'the request body must be a JSON object' }], payload);
    }
  });

  test('a body over 1 MiB answers 413 Payload Too Large', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const payload = JSON.stringify({ type: 'visit', leadId: 'ld_x', value: 'a'.repeat(MAX_BODY_BYTES) });
    const res = await apiClient(t.app, key).call({ method: 'POST', url: '/api/events', payload, headers: json });
    assertError(res, 413, 'Payload Too Large', 'Payload Too Large');
  });

  test('a body just under 1 MiB is read (and then judged on its content)', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const padding = MAX_BODY_BYTES - JSON.stringify({ type: 'visit', pad: '' }).length;
    const payload = JSON.stringify({ type: 'visit', pad: 'a'.repeat(padding) });
    assert.equal(Buffer.byteLength(payload), MAX_BODY_BYTES);
    const res = await apiClient(t.app, key).call({ method: 'POST', url: '/api/events', payload, headers: json });
    assertValidation(res, '/pad');
  });

  test('a text/plain POST answers 415', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app, key).call({
      method: 'POST',
      url: '/api/events',
      payload: '{"type":"visit"}',
      headers: { 'content-type': 'text/plain' },
    });
    assertError(res, 415, 'Unsupported Media Type', 'Unsupported Media Type');
  });

  test('a form-encoded POST answers 415', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app, key).call({
      method: 'POST',
      url: '/api/events',
      payload: 'type=visit',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assertError(res, 415, 'Unsupported Media Type', 'Unsupported Media Type');
  });

  test('application/json with a charset is accepted', async () => {
    const { key, accountId } = await makeTenant(t.db, t.config);
    const leadId = (await makeContact(t.db, accountId)).id;
    const res = await apiClient(t.app, key).call({
      method: 'POST',
      url: '/api/events',
      payload: JSON.stringify({ type: 'visit', leadId }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  test('missing type answers 400 Validation Error naming /type, never the root', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const details = assertValidation(await apiClient(t.app, key).post('/api/events', { leadId: 'ld_x' }), '/type');
    assert.ok(
      details.every((d) => d.path !== '' && d.path !== '/'),
      JSON.stringify(details),
    );
  });

  test('missing type and missing leadId/tracker: Validation Error comes first', async () => {
    const { key } = await makeTenant(t.db, t.config);
    assertValidation(await apiClient(t.app, key).post('/api/events', {}), '/type');
  });

  test('neither leadId nor tracker answers 400 leadId or tracker is required', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app, key).post('/api/events', { type: 'visit' });
    assertError(res, 400, 'Bad Request', 'leadId or tracker is required');
  });

  test('an unknown member answers 400 Validation Error naming it', async () => {
    const { key } = await makeTenant(t.db, t.config);
    assertValidation(await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId: 'ld_x', colour: 'red' }), '/colour');
  });

  test('a number where type is a string answers 400 naming /type', async () => {
    const { key } = await makeTenant(t.db, t.config);
    assertValidation(await apiClient(t.app, key).post('/api/events', { type: 42, leadId: 'ld_x' }), '/type');
  });

  test('a list where metadata is an object answers 400 naming /metadata', async () => {
    const { key } = await makeTenant(t.db, t.config);
    assertValidation(await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId: 'ld_x', metadata: ['a'] }), '/metadata');
  });

  test('a number where leadId is a string answers 400 naming /leadId (not coerced)', async () => {
    const { key } = await makeTenant(t.db, t.config);
    assertValidation(await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId: 12345 }), '/leadId');
  });

  test('a contact that does not exist answers 404 Lead not found', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId: 'ld_doesnotexist' });
    assertError(res, 404, 'Not Found', 'Lead not found');
  });
});

describe('paths and methods', () => {
  test('an unknown path answers 404 JSON Not Found', async () => {
    const res = await apiClient(t.app).get('/api/nothing-here');
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assertError(res, 404, 'Not Found', 'Not Found');
  });

  test('POST to an unknown path answers 404 JSON Not Found, even with a key', async () => {
    const { key } = await makeTenant(t.db, t.config);
    assertError(await apiClient(t.app, key).post('/api/nothing-here', { type: 'x' }), 404, 'Not Found', 'Not Found');
  });

  test('GET on /api/events answers 405 JSON with an Allow header', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const res = await apiClient(t.app, key).get('/api/events');
    assertError(res, 405, 'Method Not Allowed', 'Method Not Allowed');
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(String(res.headers.allow).split(/,\s*/), ['POST']);
  });

  test('a wrong method with a trailing slash still answers 405', async () => {
    const res = await apiClient(t.app).call({ method: 'DELETE', url: '/api/events/' });
    assertError(res, 405, 'Method Not Allowed', 'Method Not Allowed');
    assert.ok(String(res.headers.allow).includes('POST'));
  });

  test('a malformed URL answers a JSON 400 in the usual error shape', async () => {
    const res = await apiClient(t.app).get('/api/%zz');
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.body).sort(), ['code', 'error', 'message', 'statusCode']);
    assert.equal(res.body.code, 'BAD_URL');
    assert.equal(res.body.statusCode, 400);
    assert.equal(res.body.error, 'Bad Request');
    assert.match(String(res.headers['x-request-id']), uuid);
  });
});

describe('request ids', () => {
  test('every response carries x-request-id: 200, 4xx from each layer, 404, 405', async () => {
    const { key, accountId } = await makeTenant(t.db, t.config);
    const leadId = (await makeContact(t.db, accountId)).id;
    const client = apiClient(t.app, key);
    const responses: [string, ApiResponse][] = [
      ['200', await client.post('/api/events', { type: 'visit', leadId })],
      ['401', await apiClient(t.app).post('/api/events', { type: 'visit', leadId })],
      ['400 json', await client.call({ method: 'POST', url: '/api/events', payload: '{', headers: json })],
      ['400 validation', await client.post('/api/events', {})],
      ['404 lead', await client.post('/api/events', { type: 'visit', leadId: 'ld_none' })],
      ['404 path', await client.get('/nope')],
      ['405', await client.get('/api/events')],
      ['415', await client.call({ method: 'POST', url: '/api/events', payload: 'x', headers: { 'content-type': 'text/plain' } })],
    ];
    const seen = new Set<string>();
    for (const [label, res] of responses) {
      assert.equal(String(res.status), label.split(' ')[0], `${label}: ${JSON.stringify(res.body)}`);
      assert.match(String(res.headers['x-request-id']), uuid, `${label} carries x-request-id`);
      seen.add(String(res.headers['x-request-id']));
    }
    assert.equal(seen.size, responses.length, 'each request has its own id');
  });

  test('an x-request-id sent by the client is not trusted as the id', async () => {
    const res = await apiClient(t.app).get('/nope', { 'x-request-id': 'attacker-chosen' });
    assert.match(String(res.headers['x-request-id']), uuid);
  });
});

describe('unexpected failures', () => {
  test('a 500 answers the generic body with the request id, no internals', async () => {
    // A dedicated app whose database goes away under it.
    const broken = await startTestApp();
    try {
      const { key, accountId } = await makeTenant(broken.db, broken.config);
      const leadId = (await makeContact(broken.db, accountId)).id;
      const client = apiClient(broken.app, key);
      assert.equal((await client.post('/api/events', { type: 'visit', leadId })).status, 200);
      await broken.db.close();

      const res = await client.post('/api/events', { type: 'visit', leadId });
      assert.equal(res.status, 500);
      const requestId = res.headers['x-request-id'];
      assert.match(String(requestId), uuid);
      assert.deepEqual(res.body, {
        statusCode: 500,
        error: 'Internal Server Error',
        code: 'INTERNAL_ERROR',
        message: 'Internal Server Error',
        requestId,
      });
      const text = JSON.stringify(res.body);
      assert.doesNotMatch(text, /\bat \S+:\d+|stack|select|insert|driver|pool|sqlite|postgres/i);

      // The log holds the full error under the same request id, so the answer can be traced.
      const logged = broken.logs.map((line) => JSON.parse(line)).find((l) => l.requestId === requestId && l.level >= 50);
      assert.ok(logged?.err?.stack, 'the error is logged in full with its request id');
    } finally {
      await broken.app.close();
      rmSync(broken.config.dataDir, { recursive: true, force: true });
    }
  });
});
