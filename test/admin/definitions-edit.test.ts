import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getContactProfile, writeContact } from '../../src/modules/contacts/contacts.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeField, makeKpi, makeSegment, randomEmail } from '../helpers/factories.js';
import { assertError, signedIn } from './helpers.js';

/** docs/admin-api.md, Custom fields and KPIs: rename and delete (docs/decisions.md, Editing and deleting). */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const profile = async (accountId: string, id: string) => (await getContactProfile(t.db, accountId, { id }))!;
const contactWith = (accountId: string, lead: Parameters<typeof writeContact>[2]) =>
  writeContact(t.db, accountId, { email: randomEmail(), name: 'Ada Lovelace', ...lead }).then((r) => r.id);
const countRows = async (table: 'contact_field_values' | 'contact_kpis', accountId: string) =>
  (await t.db.kysely.selectFrom(table).select('contact_id').where('account_id', '=', accountId).execute()).length;

describe('custom fields: rename', () => {
  test('stored values stay, under the new name; API writes use the new name', async () => {
    const { panel, accountId } = await signedIn(t);
    const field = await makeField(t.db, accountId, 'City', 'string');
    const email = randomEmail();
    const contact = await contactWith(accountId, { email, fields: [{ key: 'City', value: 'Paris' }] });
    const res = await panel.patch(`/fields/${field.id}`, { name: ' Town ' });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: { id: field.id, name: 'Town', type: 'string' } });
    assert.deepEqual((await profile(accountId, contact)).fields, { Town: 'Paris' });
    await writeContact(t.db, accountId, { email, fields: [{ key: 'town', value: 'Lyon' }] });
    assert.deepEqual((await profile(accountId, contact)).fields, { Town: 'Lyon' });
    assert.deepEqual((await panel.get('/fields')).body.items, [{ id: field.id, name: 'Town', type: 'string' }]);
  });

  test('saved segments naming the field are rewritten and still select the same contacts', async () => {
    const { panel, accountId } = await signedIn(t);
    const field = await makeField(t.db, accountId, 'Plan', 'string');
    const pro = await contactWith(accountId, { fields: [{ key: 'Plan', value: 'pro' }] });
    await contactWith(accountId, { fields: [{ key: 'Plan', value: 'free' }] });
    const segment = await makeSegment(t.db, accountId, { name: 'Pro', criteria: { fields: [{ name: 'plan', value: 'pro' }] } });
    assert.equal((await panel.patch(`/fields/${field.id}`, { name: 'Tier' })).status, 200);
    const saved = (await panel.get('/segments')).body.items.find((s: { id: string }) => s.id === segment.id);
    assert.deepEqual(saved.criteria, { groups: [{ fields: [{ name: 'Tier', value: 'pro' }] }] });
    const members = await panel.get(`/segments/${segment.id}/contacts`);
    assert.deepEqual(
      members.body.items.map((c: { id: string }) => c.id),
      [pro],
    );
  });

  test('a change of case only is a rename', async () => {
    const { panel, accountId } = await signedIn(t);
    const field = await makeField(t.db, accountId, 'city', 'string');
    assert.equal((await panel.patch(`/fields/${field.id}`, { name: 'City' })).body.name, 'City');
  });

  test("another field's name (any case): 409 naming it, nothing changes", async () => {
    const { panel, accountId } = await signedIn(t);
    await makeField(t.db, accountId, 'City', 'string');
    const field = await makeField(t.db, accountId, 'Town', 'string');
    const body = assertError(await panel.patch(`/fields/${field.id}`, { name: 'CITY' }), 409, "a custom field named 'CITY' already exists");
    assert.equal(body.code, 'CONFLICT');
    assert.deepEqual(
      (await panel.get('/fields')).body.items.map((f: { name: string }) => f.name),
      ['City', 'Town'],
    );
  });

  test('a blank or too long name: 400 at /name; a type or other member: 400', async () => {
    const { panel, accountId } = await signedIn(t);
    const field = await makeField(t.db, accountId, 'City', 'string');
    assertError(await panel.patch(`/fields/${field.id}`, { name: '  ' }), 400, 'Validation Error', '/name');
    assertError(await panel.patch(`/fields/${field.id}`, { name: 'x'.repeat(256) }), 400, 'Validation Error', '/name');
    assertError(await panel.patch(`/fields/${field.id}`, { name: 'Town', type: 'number' }), 400, 'Validation Error');
    assert.equal((await panel.get('/fields')).body.items[0].name, 'City');
  });

  test('an unknown field: 404 Custom field not found', async () => {
    const { panel } = await signedIn(t);
    assertError(await panel.patch('/fields/fld_nope', { name: 'Town' }), 404, 'Custom field not found');
  });
});

describe('custom fields: delete', () => {
  test("204; the definition and every contact's value are gone", async () => {
    const { panel, accountId } = await signedIn(t);
    const city = await makeField(t.db, accountId, 'City', 'string');
    await makeField(t.db, accountId, 'Age', 'number');
    const contact = await contactWith(accountId, {
      fields: [
        { key: 'City', value: 'Paris' },
        { key: 'Age', value: 40 },
      ],
    });
    assert.equal((await panel.del(`/fields/${city.id}`)).status, 204);
    assert.deepEqual((await profile(accountId, contact)).fields, { Age: 40 });
    assert.equal(await countRows('contact_field_values', accountId), 1);
    assertError(await panel.del(`/fields/${city.id}`), 404, 'Custom field not found');
  });

  test('refused while saved segments name it: 409 naming them; allowed once they no longer do', async () => {
    const { panel, accountId } = await signedIn(t);
    const field = await makeField(t.db, accountId, 'City', 'string');
    const paris = await makeSegment(t.db, accountId, { name: 'Paris', criteria: { fields: [{ name: 'City', value: 'Paris' }] } });
    await makeSegment(t.db, accountId, { name: 'Lyon', criteria: { fields: [{ name: 'City', value: 'Lyon' }] } });
    await makeSegment(t.db, accountId, { name: 'Everyone', criteria: {} });
    const body = assertError(
      await panel.del(`/fields/${field.id}`),
      409,
      "custom field 'City' is used by segments 'Lyon', 'Paris': edit or delete them first",
    );
    assert.equal(body.code, 'CONFLICT');
    assert.equal((await panel.get('/fields')).body.items.length, 1, 'nothing deleted');
    const lyon = (await panel.get('/segments')).body.items.find((s: { name: string }) => s.name === 'Lyon');
    assert.equal((await panel.del(`/segments/${lyon.id}`)).status, 204);
    assertError(await panel.del(`/fields/${field.id}`), 409, "custom field 'City' is used by segment 'Paris': edit or delete it first");
    assert.equal((await panel.del(`/segments/${paris.id}`)).status, 204);
    assert.equal((await panel.del(`/fields/${field.id}`)).status, 204);
  });
});

describe('KPIs: rename and delete', () => {
  test('rename changes the display name only: the id and every total stay', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeKpi(t.db, accountId, 'ltv', 'Lifetime value');
    const contact = await contactWith(accountId, { kpis: { ltv: 12.5 } });
    const res = await panel.patch('/kpis/ltv', { name: 'Revenue' });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: { id: 'ltv', name: 'Revenue' } });
    assert.deepEqual((await panel.get('/kpis')).body.items, [{ id: 'ltv', name: 'Revenue' }]);
    assert.deepEqual((await profile(accountId, contact)).kpis, { ltv: 12.5 });
    assertError(await panel.patch('/kpis/ltv', { name: '' }), 400, 'Validation Error', '/name');
    assertError(await panel.patch('/kpis/ltv', { id: 'revenue', name: 'Revenue' }), 400, 'Validation Error');
  });

  test("delete: 204; the definition and every contact's total are gone", async () => {
    const { panel, accountId } = await signedIn(t);
    await makeKpi(t.db, accountId, 'ltv');
    await makeKpi(t.db, accountId, 'orders');
    const contact = await contactWith(accountId, { kpis: { ltv: 10, orders: 1 } });
    assert.equal((await panel.del('/kpis/ltv')).status, 204);
    assert.deepEqual((await profile(accountId, contact)).kpis, { orders: 1 });
    assert.equal(await countRows('contact_kpis', accountId), 1);
    assert.deepEqual((await panel.get('/kpis')).body.items, [{ id: 'orders', name: 'orders' }]);
  });

  test('an unknown KPI: 404 KPI not found', async () => {
    const { panel } = await signedIn(t);
    assertError(await panel.patch('/kpis/nope', { name: 'X' }), 404, 'KPI not found');
    assertError(await panel.del('/kpis/nope'), 404, 'KPI not found');
  });
});

describe('security', () => {
  test("cannot rename or delete another account's field: 404, nothing changes", async () => {
    const { panel } = await signedIn(t);
    const other = await signedIn(t);
    const theirs = await makeField(t.db, other.accountId, 'City', 'string');
    const contact = await contactWith(other.accountId, { fields: [{ key: 'City', value: 'Paris' }] });
    assertError(await panel.patch(`/fields/${theirs.id}`, { name: 'Mine' }), 404, 'Custom field not found');
    assertError(await panel.del(`/fields/${theirs.id}`), 404, 'Custom field not found');
    assert.deepEqual((await other.panel.get('/fields')).body.items, [theirs]);
    assert.deepEqual((await profile(other.accountId, contact)).fields, { City: 'Paris' });
  });

  test("cannot rename or delete another account's KPI (same id in both accounts: only mine changes)", async () => {
    const { panel, accountId } = await signedIn(t);
    const other = await signedIn(t);
    await makeKpi(t.db, other.accountId, 'ltv', 'Theirs');
    const contact = await contactWith(other.accountId, { kpis: { ltv: 5 } });
    assertError(await panel.patch('/kpis/ltv', { name: 'Mine' }), 404, 'KPI not found');
    assertError(await panel.del('/kpis/ltv'), 404, 'KPI not found');
    await makeKpi(t.db, accountId, 'ltv', 'Mine');
    assert.equal((await panel.del('/kpis/ltv')).status, 204);
    assert.deepEqual((await other.panel.get('/kpis')).body.items, [{ id: 'ltv', name: 'Theirs' }]);
    assert.deepEqual((await profile(other.accountId, contact)).kpis, { ltv: 5 });
  });

  test('rename and delete need the CSRF token', async () => {
    const { panel, accountId } = await signedIn(t);
    const field = await makeField(t.db, accountId, 'City', 'string');
    assertError(
      await panel.raw({ method: 'PATCH', url: `/admin/api/fields/${field.id}`, payload: { name: 'Town' } }),
      403,
      'Invalid CSRF token',
    );
    assertError(await panel.raw({ method: 'DELETE', url: `/admin/api/fields/${field.id}` }), 403, 'Invalid CSRF token');
    assert.equal((await panel.get('/fields')).body.items[0].name, 'City');
  });
});
