import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiClient, assertMissingScope } from '../helpers/app.js';
import { makeField, makeKpi, randomEmail, randomPhone } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();

/** Body members with a JSON type other than the spec's, or unknown members: ajv answers before the service. */
const SHAPE_CASES: [label: string, body: Record<string, unknown>, paths: string[]][] = [
  ['id as a number', { id: 5 }, ['/id']],
  ['email as a number', { email: 5 }, ['/email']],
  ['email as a list', { email: ['a@example.com'] }, ['/email']],
  ['phone as a number', { phone: 33612345678 }, ['/phone']],
  ['name as a number', { name: 12 }, ['/name']],
  ['name as null', { name: null }, ['/name']],
  ['tags as a string', { tags: 'vip' }, ['/tags']],
  ['a tag as a number', { tags: ['ok', 1] }, ['/tags/1']],
  ['tagsRemove as an object', { tagsRemove: {} }, ['/tagsRemove']],
  ['fields as an object', { fields: { City: 'Paris' } }, ['/fields']],
  ['a field entry without value', { fields: [{ key: 'City' }] }, ['/fields/0/value']],
  ['a field entry without key', { fields: [{ value: 'Paris' }] }, ['/fields/0/key']],
  ['a field entry with an extra member', { fields: [{ key: 'City', value: 'Paris', type: 'x' }] }, ['/fields/0/type']],
  ['a field key longer than 255', { fields: [{ key: 'k'.repeat(256), value: 1 }] }, ['/fields/0/key']],
  ['kpis as a list', { kpis: [1] }, ['/kpis']],
  ['kpis as a string', { kpis: 'visits' }, ['/kpis']],
  ['metadata as a string', { metadata: 'x' }, ['/metadata']],
  ['metadata as a list', { metadata: [] }, ['/metadata']],
  ['metadata as null', { metadata: null }, ['/metadata']],
  ['note as a string', { note: 'hello' }, ['/note']],
  ['tracker as a number', { tracker: 5 }, ['/tracker']],
  ['tracker empty', { tracker: '' }, ['/tracker']],
  ['tracker longer than 255', { tracker: 't'.repeat(256) }, ['/tracker']],
  ['an unknown member', { nickname: 'Bob' }, ['/nickname']],
];

for (const [label, extra, paths] of SHAPE_CASES) {
  test(`${label}: 400 Validation Error with details at ${paths.join(', ')}`, async () => {
    const t = await contactTenant(app());
    const email = randomEmail();
    const res = await t.lead({ email, name: 'Shape Check', ...extra });
    assert.equal(res.status, 400);
    assert.equal(res.body.statusCode, 400);
    assert.equal(res.body.error, 'Bad Request');
    assert.equal(res.body.message, 'Validation Error');
    assert.deepEqual(
      res.body.details.map((d: { path: string }) => d.path),
      paths,
    );
    assert.ok(res.body.details.every((d: { message: string }) => typeof d.message === 'string' && d.message !== ''));
    if (!('email' in extra)) assert.equal(await t.profile({ email }), undefined);
  });
}

/** Rules the service checks once members have the right type. */
const RULE_CASES: [label: string, body: () => Record<string, unknown>, paths: string[]][] = [
  ['a new contact without a name', () => ({ email: randomEmail() }), ['/name']],
  ['a new contact with a 1-character name', () => ({ email: randomEmail(), name: 'A' }), ['/name']],
  ['a new contact whose name is 1 character once trimmed', () => ({ email: randomEmail(), name: '   A   ' }), ['/name']],
  ['a name longer than 255 characters', () => ({ email: randomEmail(), name: 'n'.repeat(256) }), ['/name']],
  ['no identifier at all', () => ({ name: 'Nobody Known' }), ['/email']],
  ['only an unknown id (nothing to create from)', () => ({ id: 'ld_nothing', name: 'Ghost' }), ['/email']],
  ['an empty body', () => ({}), ['/name', '/email']],
  ['invalid email, invalid phone and short name together', () => ({ email: 'bad', phone: '12', name: 'A' }), ['/email', '/phone', '/name']],
];

for (const [label, body, paths] of RULE_CASES) {
  test(`${label}: 400 Validation Error with details at ${paths.join(', ')}`, async () => {
    const t = await contactTenant(app());
    const sent = body();
    const res = await t.lead(sent);
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'Validation Error');
    assert.deepEqual(
      res.body.details.map((d: { path: string }) => d.path),
      paths,
    );
    if (typeof sent.email === 'string') assert.equal(await t.profile({ email: sent.email }), undefined);
  });
}

test('a 1-character name is refused on update too, and the stored name stays', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Long Enough' });
  const res = await t.lead({ email, name: ' B ' });
  assert.equal(res.status, 400);
  assert.deepEqual(
    res.body.details.map((d: { path: string }) => d.path),
    ['/name'],
  );
  assert.equal((await t.profile({ email }))?.name, 'Long Enough');
});

test('a bad request changes nothing: tags, fields, KPIs, metadata, notes, trackers and addresses stay as they were', async () => {
  const t = await contactTenant(app());
  await makeField(app().db, t.accountId, 'City', 'location');
  await makeKpi(app().db, t.accountId, 'visits');
  const email = randomEmail();
  await t.lead({ email, name: 'Stable', tags: ['old'], fields: [{ key: 'City', value: 'Lyon' }], kpis: { visits: 1 }, metadata: { a: 1 } });
  const before = await t.profile({ email });
  const res = await t.lead({
    email,
    phone: randomPhone(),
    name: 'Changed',
    tags: ['new'],
    tagsRemove: ['old'],
    fields: [{ key: 'City', value: 'Paris' }],
    kpis: { visits: 5 },
    metadata: { a: 2 },
    tracker: 'v-bad-request',
    note: { text: 'should not stay', createdBy: '' },
  });
  assert.equal(res.status, 400);
  assert.deepEqual(await t.profile({ email }), before);
});

test('a body that is not JSON is 400 Invalid JSON body and creates nothing', async () => {
  const t = await contactTenant(app());
  const res = await t.api.call({
    method: 'POST',
    url: '/api/leads',
    payload: '{"email": "x@example.com", ',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.message, 'Invalid JSON body');
  assert.equal(await t.profile({ email: 'x@example.com' }), undefined);
});

test('no key: 401 API key is required, even with a bad body', async () => {
  const res = await apiClient(app().app).post('/api/leads', { email: 5 });
  assert.equal(res.status, 401);
  assert.equal(res.body.message, 'API key is required');
});

test('a key without leads:write gets 403 and writes nothing', async () => {
  const t = await contactTenant(app(), { scopes: ['events:write', 'campaigns:trigger', 'leads:read'] });
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Not Allowed' });
  assertMissingScope(res, 'leads:write');
  assert.equal(await t.profile({ email }), undefined);
});

test('an unknown key is 404 API key not found', async () => {
  const res = await apiClient(app().app, 'hk_00000000000000000000000000000000').post('/api/leads', { email: randomEmail(), name: 'Nope' });
  assert.equal(res.status, 404);
  assert.equal(res.body.message, 'API key not found');
});

test('PUT on /api/leads is 405 with JSON, naming the methods it has (GET reads, POST writes)', async () => {
  const t = await contactTenant(app());
  const res = await t.api.call({ method: 'PUT', url: '/api/leads', payload: {} });
  assert.equal(res.status, 405);
  assert.equal(res.body.message, 'Method Not Allowed');
  assert.equal(res.headers.allow, 'GET, HEAD, POST');
});
