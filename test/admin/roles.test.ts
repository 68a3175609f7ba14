import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { createKey } from '../../src/modules/keys/keys.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign } from '../helpers/herald.js';
import { assertError, PASSWORD, signedIn } from './helpers.js';

/** docs/admin-api.md, roles: endpoints marked (admin) answer 403 Administrators only to members. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('a member is refused every key, user and account-edit endpoint, and nothing changes', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  const key = await createKey(t.db, t.config, admin.accountId, { name: 'k', scopes: ['leads:write'] });
  const refused: [string, string, unknown?][] = [
    ['GET', '/keys'],
    ['POST', '/keys', { name: 'mine', scopes: ['leads:write'] }],
    ['GET', `/keys/${key.id}/value`],
    ['PATCH', `/keys/${key.id}`, { active: false }],
    ['DELETE', `/keys/${key.id}`],
    ['GET', '/users'],
    ['POST', '/users', { email: randomEmail(), password: PASSWORD, role: 'admin' }],
    ['DELETE', `/users/${admin.userId}`],
    ['PATCH', '/account', { whatsapp: { phoneNumberId: '1', token: 't' } }],
  ];
  for (const [method, url, payload] of refused) {
    const res = await member.panel.raw({
      method: method as 'GET',
      url: `/admin/api${url}`,
      headers: { 'x-csrf-token': member.panel.csrf },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    assertError(res, 403, 'Administrators only');
  }
  const keys = (await admin.panel.get('/keys')).body.items;
  assert.deepEqual(
    keys.map((k: { id: string; active: boolean }) => [k.id, k.active]),
    [[key.id, true]],
  );
  assert.equal((await admin.panel.get('/users')).body.items.length, 2);
  assert.equal((await admin.panel.get('/account')).body.whatsapp.configured, false);
});

test('a member may read the account and work with contacts, campaigns, segments and definitions', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  const { id: contactId } = await writeContact(t.db, admin.accountId, { email: randomEmail(), name: 'Ada Lovelace' });
  const { id: campaignId } = await makeEmailCampaign(t, admin.accountId);
  const p = member.panel;
  assert.equal((await p.get('/account')).status, 200);
  assert.equal((await p.get('/contacts')).status, 200);
  assert.equal((await p.patch(`/contacts/${contactId}`, { archived: true })).status, 200);
  assert.equal((await p.post(`/contacts/${contactId}/notes`, { text: 'called' })).status, 201);
  assert.equal((await p.get('/campaigns')).status, 200);
  const created = await p.post('/campaigns', { name: 'By a member', channel: 'email' });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal((await p.patch(`/campaigns/${campaignId}`, { subject: 'Changed' })).status, 200);
  assert.equal((await p.post('/segments', { name: 'Everyone', criteria: {} })).status, 200);
  assert.equal((await p.post('/fields', { name: 'City', type: 'location' })).status, 200);
  assert.equal((await p.get('/outbox')).status, 200);
});

test('the role is read on every request: a member promoted to admin gets in without signing in again', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  assertError(await member.panel.get('/keys'), 403, 'Administrators only');
  await t.db.kysely.updateTable('users').set({ role: 'admin' }).where('id', '=', member.userId).execute();
  assert.equal((await member.panel.get('/keys')).status, 200);
});
