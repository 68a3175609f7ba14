import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeField, makeKpi, randomEmail } from '../helpers/factories.js';
import { assertError, signedIn } from './helpers.js';

/** POST /admin/api/contacts/:id/edit: the lead write of POST /api/leads, strict (docs/admin-api.md, Contacts). */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

async function contactWithDefinitions(accountId: string) {
  await makeField(t.db, accountId, 'City', 'string');
  await makeField(t.db, accountId, 'Birthday', 'date');
  await makeKpi(t.db, accountId, 'orders', 'Orders');
  const { id } = await writeContact(t.db, accountId, {
    email: randomEmail(),
    name: 'Ada Lovelace',
    tags: ['vip', 'newsletter'],
    fields: [{ key: 'City', value: 'Paris' }],
    kpis: { orders: 2 },
  });
  return id;
}

test('the contact page edits the name, tags, custom fields and KPIs with the rules of POST /api/leads', async () => {
  const { accountId, panel } = await signedIn(t);
  const id = await contactWithDefinitions(accountId);
  const res = await panel.post(`/contacts/${id}/edit`, {
    name: '  Ada King  ',
    tags: ['Client Fidèle'],
    tagsRemove: ['Newsletter'],
    fields: [
      { key: 'city', value: '' },
      { key: 'BIRTHDAY', value: '10/12/1815' },
    ],
    kpis: { orders: '1.5' },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.name, 'Ada King');
  assert.deepEqual(res.body.tags.sort(), ['client-fidele', 'vip']);
  assert.deepEqual(res.body.fields, { Birthday: '1815-12-10' });
  assert.deepEqual(res.body.kpis, { orders: 3.5 });
  assert.deepEqual(res.body, (await panel.get(`/contacts/${id}`)).body);
});

test('what the API would skip with a warning is a 400 at that member here, and nothing changes', async () => {
  const { accountId, panel } = await signedIn(t);
  const id = await contactWithDefinitions(accountId);
  const before = (await panel.get(`/contacts/${id}`)).body;
  const res = await panel.post(`/contacts/${id}/edit`, {
    tags: ['new-tag'],
    fields: [
      { key: 'Birthday', value: 'not a date' },
      { key: 'Shoe size', value: 42 },
    ],
    kpis: { orders: 'many', unknown: 1 },
  });
  const body = assertError(res, 400, 'Validation Error');
  assert.deepEqual(body.details.map((d: { path: string }) => d.path).sort(), ['/fields/0', '/fields/1', '/kpis/orders', '/kpis/unknown']);
  assert.deepEqual((await panel.get(`/contacts/${id}`)).body, before);
});

test('a name the lead write refuses is a 400 at /name, and nothing changes', async () => {
  const { accountId, panel } = await signedIn(t);
  const id = await contactWithDefinitions(accountId);
  const before = (await panel.get(`/contacts/${id}`)).body;
  assertError(await panel.post(`/contacts/${id}/edit`, { name: 'A', tags: ['x'] }), 400, 'Validation Error', '/name');
  assertError(await panel.post(`/contacts/${id}/edit`, { email: 'other@example.com' }), 400, 'Validation Error');
  assert.deepEqual((await panel.get(`/contacts/${id}`)).body, before);
});

test("cannot edit another account's contact (404), and it is unchanged", async () => {
  const owner = await signedIn(t);
  const stranger = await signedIn(t);
  const id = await contactWithDefinitions(owner.accountId);
  const before = (await owner.panel.get(`/contacts/${id}`)).body;
  assertError(await stranger.panel.post(`/contacts/${id}/edit`, { tags: ['hacked'] }), 404, 'Lead not found');
  assertError(await stranger.panel.post('/contacts/ld_unknown/edit', { tags: ['x'] }), 404, 'Lead not found');
  assert.deepEqual((await owner.panel.get(`/contacts/${id}`)).body, before);
});

test('a member may edit a contact', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  const id = await contactWithDefinitions(admin.accountId);
  const res = await member.panel.post(`/contacts/${id}/edit`, { tags: ['called'] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.ok(res.body.tags.includes('called'));
});
