import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { type ApiResponse, apiClient, assertApiError, assertMissingScope } from '../helpers/app.js';
import { makeField, makeKey, makeKpi, randomEmail, randomPhone, uniq } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

/**
 * The read side of the public API (issue 13): `GET /api/leads/{id}` and `GET /api/leads?email=|phone=`
 * with scope leads:read answer the `herald contact show` profile, tenant-isolated, key in a header only.
 */

const app = useTestApp();

/** An account with one contact carrying every kind of data, and a key holding leads:read only. */
async function populated() {
  const tenant = await contactTenant(app());
  await makeField(app().db, tenant.accountId, 'City', 'location');
  await makeKpi(app().db, tenant.accountId, 'visits');
  const email = randomEmail();
  const phone = randomPhone();
  const tracker = uniq('visitor-');
  const written = await tenant.lead({
    email,
    phone,
    name: 'Ada Lovelace',
    tags: ['VIP', 'Black Friday'],
    fields: [{ key: 'city', value: 'London' }],
    kpis: { visits: 2.5 },
    metadata: { plan: 'gold', nested: { a: [1, 2] } },
    note: { text: 'Called her', createdBy: 'Bob' },
    tracker,
  });
  assert.equal(written.status, 200, JSON.stringify(written.body));
  const reader = await makeKey(app().db, app().config, tenant.accountId, { scopes: ['leads:read'] });
  return { ...tenant, id: written.body.id as string, email, phone, tracker, read: apiClient(app().app, reader.key) };
}

const validation = (res: ApiResponse, details: { path: string; message: string }[]) =>
  assert.deepEqual(
    { status: res.status, body: res.body },
    { status: 400, body: { statusCode: 400, error: 'Bad Request', code: 'VALIDATION_ERROR', message: 'Validation Error', details } },
  );

describe('GET /api/leads/{id}', () => {
  test('answers the contact exactly as contact show does', async () => {
    const c = await populated();
    const res = await c.read.get(`/api/leads/${c.id}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, JSON.parse(JSON.stringify(await c.profile({ id: c.id }))));
    const { createdAt, updatedAt, notes, ...rest } = res.body;
    assert.deepEqual(rest, {
      id: c.id,
      name: 'Ada Lovelace',
      emails: [c.email],
      phones: [c.phone],
      tags: ['black-friday', 'vip'],
      fields: { City: 'London' },
      kpis: { visits: 2.5 },
      metadata: { plan: 'gold', nested: { a: [1, 2] } },
      trackers: [c.tracker],
      archived: false,
      optedOut: false,
    });
    assert.deepEqual(
      notes.map((n: { text: string; createdBy: string }) => [n.text, n.createdBy]),
      [['Called her', 'Bob']],
    );
    for (const at of [createdAt, updatedAt, notes[0].createdAt]) assert.match(at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  test('an archived, opted-out contact is answered with its flags', async () => {
    const c = await populated();
    await setContactFlags(app().db, c.accountId, c.id, { archived: true, optedOut: true });
    const res = await c.read.get(`/api/leads/${c.id}`);
    assert.deepEqual([res.status, res.body.archived, res.body.optedOut], [200, true, true]);
  });

  test('an unknown id answers 404 Lead not found', async () => {
    const c = await populated();
    for (const id of ['ld_doesnotexist', encodeURIComponent(c.email), 'x'.repeat(255)]) {
      assertApiError(await c.read.get(`/api/leads/${id}`), 404, 'Not Found', 'Lead not found');
    }
  });
});

describe('GET /api/leads?email=|phone=', () => {
  test('finds the contact by email, read like the write path reads it (trimmed, lowercased)', async () => {
    const c = await populated();
    for (const email of [c.email, `  ${c.email.toUpperCase()} `]) {
      const res = await c.read.get(`/api/leads?${new URLSearchParams({ email })}`);
      assert.deepEqual([res.status, res.body.id], [200, c.id], email);
      assert.deepEqual(res.body, JSON.parse(JSON.stringify(await c.profile({ id: c.id }))));
    }
  });

  test('finds the contact by phone in any form the write path accepts, an unencoded + included', async () => {
    const c = await populated();
    const digits = c.phone.slice(1);
    const spaced = `+${digits.slice(0, 2)} ${digits.slice(2, 3)} ${digits.slice(3, 5)}-${digits.slice(5, 7)}.${digits.slice(7)}`;
    for (const query of [
      new URLSearchParams({ phone: c.phone }).toString(),
      new URLSearchParams({ phone: spaced }).toString(),
      new URLSearchParams({ phone: digits }).toString(),
      // A `+` left unencoded in a query string is a space: still the same number.
      `phone=${c.phone}`,
    ]) {
      const res = await c.read.get(`/api/leads?${query}`);
      assert.deepEqual([res.status, res.body.id], [200, c.id], query);
    }
  });

  test('an address no contact holds answers 404 Lead not found', async () => {
    const c = await populated();
    for (const query of [{ email: randomEmail() }, { phone: randomPhone() }] as Record<string, string>[]) {
      assertApiError(await c.read.get(`/api/leads?${new URLSearchParams(query)}`), 404, 'Not Found', 'Lead not found');
    }
  });

  test('exactly one valid address: both, neither, invalid ones are Validation Errors naming the member', async () => {
    const c = await populated();
    const phoneMessage = 'must be a possible phone number in international format: + (or digits only), country code, number';
    const cases: [string, { path: string; message: string }[]][] = [
      [
        `email=${encodeURIComponent(c.email)}&phone=${encodeURIComponent(c.phone)}`,
        [{ path: '/phone', message: 'give an email or a phone, not both' }],
      ],
      ['', [{ path: '/email', message: 'an email or a phone is required (one of them)' }]],
      ['limit=5', [{ path: '/email', message: 'an email or a phone is required (one of them)' }]],
      ['email=not-an-email', [{ path: '/email', message: 'must be a valid email address' }]],
      ['email=', [{ path: '/email', message: 'must be a valid email address' }]],
      ['phone=12', [{ path: '/phone', message: phoneMessage }]],
      ['phone=%2B1abc', [{ path: '/phone', message: phoneMessage }]],
      ['email=a%40example.com&email=b%40example.com', [{ path: '/email', message: 'must be string' }]],
    ];
    for (const [query, details] of cases) validation(await c.read.get(`/api/leads?${query}`), details);
  });
});

describe('scope and key', () => {
  test('a key without leads:read gets 403 with the spec message and the scope in details, on both routes', async () => {
    const c = await populated();
    const writer = await makeKey(app().db, app().config, c.accountId, { scopes: ['leads:write', 'events:write', 'campaigns:trigger'] });
    const api = apiClient(app().app, writer.key);
    for (const url of [`/api/leads/${c.id}`, `/api/leads?${new URLSearchParams({ email: c.email })}`, '/api/leads/ld_unknown']) {
      assertMissingScope(await api.get(url), 'leads:read');
    }
  });

  test('leads:read unlocks reading only: the same key cannot write a contact', async () => {
    const c = await populated();
    const res = await c.read.post('/api/leads', { email: c.email, name: 'Renamed By Reader' });
    assertMissingScope(res, 'leads:write');
    assert.equal((await c.profile({ id: c.id }))?.name, 'Ada Lovelace');
  });

  test('the key is read from the header or a Bearer token, never from the api-key query parameter', async () => {
    const c = await populated();
    const key = (await makeKey(app().db, app().config, c.accountId, { scopes: ['leads:read'] })).key;
    const anonymous = apiClient(app().app);
    assert.equal((await anonymous.get(`/api/leads/${c.id}`, { authorization: `Bearer ${key}` })).status, 200);
    // The header wins; a query key beside it is not looked at.
    assert.equal((await anonymous.get(`/api/leads/${c.id}?api-key=hk_bogus`, { 'x-service-api-key': key })).status, 200);
    for (const url of [`/api/leads/${c.id}?api-key=${key}`, `/api/leads?${new URLSearchParams({ email: c.email, 'api-key': key })}`]) {
      const res = await anonymous.get(url);
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 401,
          body: {
            statusCode: 401,
            error: 'Unauthorized',
            code: 'API_KEY_REQUIRED',
            message: 'API key is required',
            details: [
              {
                path: '/api-key',
                message: 'this endpoint reads the key from the x-service-api-key header (or Authorization: Bearer) only',
              },
            ],
          },
        },
      );
    }
    assertApiError(await anonymous.get(`/api/leads/${c.id}`), 401, 'Unauthorized', 'API key is required');
    // Fastify's HEAD twin of the route keeps its config: a query key does not open it either.
    assert.equal((await anonymous.call({ method: 'HEAD', url: `/api/leads/${c.id}?api-key=${key}` })).status, 401);
    assert.equal((await anonymous.call({ method: 'HEAD', url: `/api/leads/${c.id}`, headers: { 'x-service-api-key': key } })).status, 200);
  });
});

describe('tenant isolation', () => {
  test("another account's contact answers 404 by id, email and phone, and shows nothing of it", async () => {
    const a = await populated();
    const b = await populated();
    for (const url of [
      `/api/leads/${a.id}`,
      `/api/leads?${new URLSearchParams({ email: a.email })}`,
      `/api/leads?${new URLSearchParams({ phone: a.phone })}`,
    ]) {
      assertApiError(await b.read.get(url), 404, 'Not Found', 'Lead not found');
    }
    // A's own key still finds it (the 404 above is about the account, not the data).
    assert.equal((await a.read.get(`/api/leads/${a.id}`)).body.id, a.id);
  });
});

test('the OpenAPI document lists both reads with their response shape and header-only security', async () => {
  const doc = (await app().app.inject({ method: 'GET', url: '/openapi.json' })).json();
  for (const path of ['/api/leads/{id}', '/api/leads']) {
    const operation = doc.paths[path]?.get;
    assert.ok(operation, `${path} is documented`);
    assert.match(operation.description, /leads:read/);
    // The document's one security scheme is the header; no api-key query parameter here.
    assert.equal(operation.security, undefined);
    assert.deepEqual(doc.security, [{ apiKeyHeader: [] }]);
    assert.ok(!(operation.parameters ?? []).some((p: { in: string; name: string }) => p.in === 'query' && p.name === 'api-key'));
    const schema = operation.responses['200'].content['application/json'].schema;
    assert.deepEqual(Object.keys(schema.properties).sort(), [
      'archived',
      'createdAt',
      'emails',
      'fields',
      'id',
      'kpis',
      'metadata',
      'name',
      'notes',
      'optedOut',
      'phones',
      'tags',
      'trackers',
      'updatedAt',
    ]);
  }
  assert.deepEqual(doc.paths['/api/leads'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort(), [
    'query:email',
    'query:phone',
  ]);
});
