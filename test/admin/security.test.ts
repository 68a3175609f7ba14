import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { recordEvent } from '../../src/modules/events/events.service.js';
import { createKey, listKeys } from '../../src/modules/keys/keys.service.js';
import { randomEmail } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';
import { assertError, signedIn } from './helpers.js';

/**
 * Tenant isolation (design.md): another account's id answers exactly like an unknown one
 * (404), and nothing of the other account changes. B, signed in, aims at A's resources.
 */

let t: TestHerald;
before(async () => {
  t = await startTestHerald();
});
after(() => t.close());

async function twoTenants() {
  const a = await signedIn(t);
  const b = await signedIn(t);
  return { a, b };
}

test("another account's API key: value, edit and delete are 404, the key unchanged", async () => {
  const { a, b } = await twoTenants();
  const key = await createKey(t.db, t.config, a.accountId, { name: 'a-key', scopes: ['leads:write'] });
  assertError(await b.panel.get(`/keys/${key.id}/value`), 404, 'API key not found');
  assertError(await b.panel.patch(`/keys/${key.id}`, { active: false, name: 'stolen' }), 404, 'API key not found');
  assertError(await b.panel.del(`/keys/${key.id}`), 404, 'API key not found');
  assert.deepEqual((await b.panel.get('/keys')).body.items, []);
  const [stored] = await listKeys(t.db, a.accountId);
  assert.deepEqual([stored?.id, stored?.name, stored?.active], [key.id, 'a-key', true]);
});

test("another account's user cannot be deleted (404), and A's users are not listed", async () => {
  const { a, b } = await twoTenants();
  assertError(await b.panel.del(`/users/${a.userId}`), 404, 'User not found');
  assert.deepEqual(
    (await b.panel.get('/users')).body.items.map((u: { id: string }) => u.id),
    [b.userId],
  );
  assert.equal((await a.panel.get('/session')).status, 200, 'A still signed in');
});

test("another account's campaign: read, edit, stats, preview, test-send and deliveries are 404, the campaign unchanged", async () => {
  const { a, b } = await twoTenants();
  const { id } = await makeEmailCampaign(t, a.accountId, { active: false });
  const bContact = (await writeContact(t.db, b.accountId, { email: randomEmail(), name: 'Bee' })).id;
  const before = (await a.panel.get(`/campaigns/${id}`)).body;
  assertError(await b.panel.get(`/campaigns/${id}`), 404, 'Campaign not found');
  assertError(await b.panel.patch(`/campaigns/${id}`, { name: 'Stolen', active: true }), 404, 'Campaign not found');
  assertError(await b.panel.get(`/campaigns/${id}/stats`), 404, 'Campaign not found');
  assertError(await b.panel.post(`/campaigns/${id}/preview`, { contactId: bContact }), 404, 'Campaign not found');
  assertError(await b.panel.post(`/campaigns/${id}/test-send`, { contactId: bContact }), 404, 'Campaign not found');
  assertError(await b.panel.get(`/campaigns/${id}/webhook-deliveries`), 404, 'Campaign not found');
  assert.deepEqual((await b.panel.get('/campaigns')).body.items, []);
  assert.deepEqual((await a.panel.get(`/campaigns/${id}`)).body, before);
  const sends = await t.db.kysely.selectFrom('sends').select('id').where('campaign_id', '=', id).execute();
  assert.deepEqual(sends, []);
});

test("another account's contact: profile, flags, activity, notes, preview and test-send are 404, the contact unchanged", async () => {
  const { a, b } = await twoTenants();
  const email = randomEmail();
  const contactId = (await writeContact(t.db, a.accountId, { email, name: 'Private Person' })).id;
  const { id: bCampaign } = await makeEmailCampaign(t, b.accountId);
  const before = (await a.panel.get(`/contacts/${contactId}`)).body;
  assertError(await b.panel.get(`/contacts/${contactId}`), 404, 'Lead not found');
  assertError(await b.panel.patch(`/contacts/${contactId}`, { optedOut: true, archived: true }), 404, 'Lead not found');
  assertError(await b.panel.get(`/contacts/${contactId}/activity`), 404, 'Lead not found');
  assertError(await b.panel.post(`/contacts/${contactId}/notes`, { text: 'planted' }), 404, 'Lead not found');
  assertError(await b.panel.post(`/campaigns/${bCampaign}/preview`, { contactId }), 404, 'Lead not found');
  assertError(await b.panel.post(`/campaigns/${bCampaign}/test-send`, { contactId }), 404, 'Lead not found');
  for (const q of [email, 'private', 'Private Person']) {
    assert.deepEqual((await b.panel.get(`/contacts?q=${encodeURIComponent(q)}`)).body.items, [], `search ${q}`);
  }
  assert.deepEqual((await b.panel.get('/contacts')).body.items, []);
  assert.deepEqual((await a.panel.get(`/contacts/${contactId}`)).body, before);
});

test("another account's segment: replace, delete and contacts are 404, the segment unchanged; A's fields are unknown to B", async () => {
  const { a, b } = await twoTenants();
  await a.panel.post('/fields', { name: 'Secret', type: 'string' });
  const segment = (await a.panel.post('/segments', { name: 'A only', criteria: { tags: ['a'] } })).body;
  assertError(await b.panel.put(`/segments/${segment.id}`, { name: 'Stolen', criteria: {} }), 404, 'Segment not found');
  assertError(await b.panel.del(`/segments/${segment.id}`), 404, 'Segment not found');
  assertError(await b.panel.get(`/segments/${segment.id}/contacts`), 404, 'Segment not found');
  assert.deepEqual((await b.panel.get('/segments')).body.items, []);
  const [unchanged] = (await a.panel.get('/segments')).body.items;
  assert.deepEqual(unchanged, { ...segment, count: 0, countedAt: unchanged.countedAt });
  assertError(
    await b.panel.post('/segments/preview', { criteria: { fields: [{ name: 'Secret', value: 'x' }] } }),
    400,
    'Validation Error',
    '/criteria/fields/0/name',
  );
});

test("a segment counts only its own account's contacts and events", async () => {
  const { a, b } = await twoTenants();
  const aContact = (await writeContact(t.db, a.accountId, { email: randomEmail(), name: 'Alice', tags: ['shared'] })).id;
  await recordEvent(t.db, a.accountId, { type: 'visit', leadId: aContact });
  assert.equal(
    (await a.panel.post('/segments/preview', { criteria: { tags: ['shared'], event: { type: 'visit', withinDays: 1 } } })).body.count,
    1,
  );
  for (const criteria of [{ tags: ['shared'] }, { event: { type: 'visit', withinDays: 1 } }, {}]) {
    const res = await b.panel.post('/segments/preview', { criteria });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual([res.body.count, res.body.items], [0, []], JSON.stringify(criteria));
  }
});

test("another account's outbox message is 404 and never listed", async () => {
  const { a, b } = await twoTenants();
  const { id: campaignId } = await makeEmailCampaign(t, a.accountId);
  const contactId = (await writeContact(t.db, a.accountId, { email: randomEmail(), name: 'Ada' })).id;
  const { sendId } = (await a.panel.post(`/campaigns/${campaignId}/test-send`, { contactId })).body;
  await eventually(async () => (await sendRow(t.db, sendId)).status === 'sent', 5000, 'the test send');
  const message = (await a.panel.get('/outbox')).body.items[0];
  assert.equal(message.sendId, sendId);
  assertError(await b.panel.get(`/outbox/${message.id}`), 404, 'Message not found');
  assert.deepEqual((await b.panel.get('/outbox')).body.items, []);
  assert.deepEqual((await b.panel.get(`/outbox?campaignId=${campaignId}`)).body.items, []);
});
