import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeContact, makeField, makeKey, makeKpi, randomEmail } from '../helpers/factories.js';
import { assertError, signedIn } from './helpers.js';

/** docs/admin-api.md, Contacts: POST /contacts/import, CSV rows written as POST /api/leads writes them. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const count = async (panel: Awaited<ReturnType<typeof signedIn>>['panel']) => (await panel.get('/contacts/count')).body.count;

/** Rows as the panel maps them, with every kind of mistake the rules of POST /api/leads refuse or warn about. */
const mixedRows = (taken: string) => [
  { email: 'ok@example.com', name: 'Ada Lovelace', tags: ['vip'], fields: [{ key: 'City', value: 'London' }], kpis: { orders: '2' } },
  { email: 'noname@example.com' },
  { name: 'No Address' },
  { email: 42, name: 'Wrong Type' },
  { email: 'warn@example.com', name: 'Warned', fields: [{ key: 'Colour', value: 'red' }], kpis: { orders: 'many' } },
  { phone: '+33612345678', email: taken, name: 'Conflicting' },
  { email: 'bad', name: 'Bad Email' },
];

/** A result without the contact's id (each account makes its own). */
const withoutId = (r: { status: number; body: any }) => ({ status: r.status, body: { ...r.body, id: r.body.id ? 'id' : undefined } });

async function setUp() {
  const user = await signedIn(t);
  await makeField(t.db, user.accountId, 'City', 'location');
  await makeKpi(t.db, user.accountId, 'orders');
  // An email held by one contact and a phone by another: a row sending both is a conflict.
  const holder = await makeContact(t.db, user.accountId, { name: 'Holder' });
  await makeContact(t.db, user.accountId, { name: 'Phone Holder', phone: '+33612345678' });
  return { ...user, taken: holder.email! };
}

describe('CSV import', () => {
  test('each row answers what POST /api/leads answers for it, and is written as it writes it', async () => {
    const { panel, taken } = await setUp();
    const res = await panel.post('/contacts/import', { items: mixedRows(taken) });
    assert.equal(res.status, 200, JSON.stringify(res.body));

    // The same bodies through the public API, on a second account set up the same way.
    const other = await setUp();
    const key = await makeKey(t.db, t.config, other.accountId);
    const api = apiClient(t.app, key.key);
    const single = [];
    for (const body of mixedRows(other.taken)) single.push(await api.post('/api/leads', body));
    assert.deepEqual(
      res.body.results.map(withoutId),
      single.map((r) => withoutId({ status: r.status, body: r.body })),
    );
    assert.deepEqual(
      res.body.results.map((r: { status: number }) => r.status),
      [200, 400, 400, 400, 200, 409, 400],
    );

    const ada = (await panel.get(`/contacts/${res.body.results[0].body.id}`)).body;
    assert.deepEqual([ada.name, ada.tags, ada.fields, ada.kpis], ['Ada Lovelace', ['vip'], { City: 'London' }, { orders: 2 }]);
    assert.equal(await count(panel), 2 + 2, 'the two contacts set up, and the two rows that passed');
  });

  test('a dry run answers the same results and keeps nothing', async () => {
    const { panel, taken } = await setUp();
    const before = await count(panel);
    const dry = await panel.post('/contacts/import', { dryRun: true, items: mixedRows(taken) });
    assert.equal(dry.status, 200);
    assert.equal(await count(panel), before, 'nothing written');
    const real = await panel.post('/contacts/import', { items: mixedRows(taken) });
    assert.deepEqual(dry.body.results.map(withoutId), real.body.results.map(withoutId));
  });

  test('rows are applied in order: a later row updates the contact an earlier one created', async () => {
    const { panel } = await signedIn(t);
    const email = randomEmail();
    const res = await panel.post('/contacts/import', {
      items: [
        { email, name: 'First Name', tags: ['a'] },
        { email, tags: ['b'] },
      ],
    });
    assert.deepEqual(
      res.body.results.map((r: { body: { created: boolean } }) => r.body.created),
      [true, false],
    );
    const profile = (await panel.get(`/contacts/${res.body.results[0].body.id}`)).body;
    assert.deepEqual(profile.tags, ['a', 'b']);
  });

  test('the request itself: 1 to 1000 rows, nothing else in the body', async () => {
    const { panel } = await signedIn(t);
    assertError(await panel.post('/contacts/import', { items: [] }), 400, 'Validation Error', '/items');
    const tooMany = Array.from({ length: 1001 }, () => ({ email: randomEmail(), name: 'Too Many' }));
    assertError(await panel.post('/contacts/import', { items: tooMany }), 400, 'Validation Error', '/items');
    assertError(await panel.post('/contacts/import', { items: [{}], extra: 1 }), 400, 'Validation Error');
    assert.equal(await count(panel), 0);
  });

  test('a write: refused without the CSRF token', async () => {
    const { panel } = await signedIn(t);
    const res = await panel.post('/contacts/import', { items: [{ email: randomEmail(), name: 'No Token' }] }, {});
    assert.equal(res.status, 403);
    assert.equal(await count(panel), 0);
  });

  test("cannot write into another account's contacts: an id of theirs creates nothing of theirs", async () => {
    const mine = await signedIn(t);
    const theirs = await signedIn(t);
    const their = await makeContact(t.db, theirs.accountId, { name: 'Their Contact' });
    const res = await mine.panel.post('/contacts/import', { items: [{ id: their.id, name: 'Hijack' }] });
    assert.equal(res.body.results[0].status, 400, 'an id of another account is no contact here: name and address needed');
    const profile = (await theirs.panel.get(`/contacts/${their.id}`)).body;
    assert.equal(profile.name, 'Their Contact');
  });
});
