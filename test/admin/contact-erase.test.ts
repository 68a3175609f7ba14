import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { accountRowsText, makeErasable } from './erase-fixture.js';
import { assertError, signedIn } from './helpers.js';

/** docs/decisions.md, Erasing a contact: DELETE /admin/api/contacts/:id. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test("erasing a contact leaves nothing of the account naming them, and leaves the other contact's rows as they were", async () => {
  const admin = await signedIn(t);
  const { erased, kept } = await makeErasable(t, admin.accountId);
  const before = await accountRowsText(t, admin.accountId);
  for (const text of [erased.contactId, erased.email, erased.phone, erased.name]) {
    assert.ok(
      Object.values(before).some((rows) => rows.includes(text)),
      `the fixture stores ${text}`,
    );
  }

  const res = await admin.panel.del(`/contacts/${erased.contactId}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body, { id: erased.contactId, sendsAnonymized: 3, sendsCancelled: 1, events: 1 });

  const afterRows = await accountRowsText(t, admin.accountId);
  for (const [table, rows] of Object.entries(afterRows)) {
    for (const text of [erased.contactId, erased.email, erased.phone, erased.name]) {
      assert.ok(!rows.includes(text), `${table} no longer holds ${text}`);
    }
  }
  assertError(await admin.panel.get(`/contacts/${erased.contactId}`), 404, 'Lead not found');
  assert.equal(await getContactProfile(t.db, admin.accountId, { email: erased.email }), undefined);
  for (const text of [kept.contactId, kept.email, kept.phone]) {
    for (const table of ['contacts', 'events', 'outbox_messages', 'webhook_deliveries', 'suppressed_addresses', 'idempotency_keys']) {
      assert.equal(afterRows[table]!.includes(text), before[table]!.includes(text), `${table}: ${text} as before`);
    }
  }
  assert.equal((await admin.panel.get(`/contacts/${kept.contactId}`)).status, 200);
});

test('the sends stay as anonymous rows and the one still waiting is cancelled, so nothing goes out', async () => {
  const admin = await signedIn(t);
  const { erased } = await makeErasable(t, admin.accountId);
  assert.equal((await admin.panel.del(`/contacts/${erased.contactId}`)).status, 200);
  const sends = await t.db.kysely.selectFrom('sends').selectAll().where('id', 'in', erased.sendIds).orderBy('created_at').execute();
  assert.equal(sends.length, 3);
  for (const send of sends) {
    assert.deepEqual([send.contact_id, send.to_address, send.trigger_data, send.reason], ['erased', null, null, null]);
  }
  const waiting = sends.find((s) => s.id === erased.waitingSendId);
  assert.equal(waiting?.status, 'cancelled');
  assert.deepEqual(sends.map((s) => s.status).sort(), ['cancelled', 'error', 'sent']);
});

test("a campaign's statistics read the same after the erase (the waiting send counts as cancelled)", async () => {
  const admin = await signedIn(t);
  const { campaignId, erased } = await makeErasable(t, admin.accountId);
  const stats = async () => {
    const res = await admin.panel.get(`/campaigns/${campaignId}/stats?days=7`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const before = await stats();
  assert.ok(
    before.totals.sent >= 2 && before.totals.opens >= 2 && before.totals.bounced >= 2 && before.totals.unsubscribes >= 2,
    JSON.stringify(before.totals),
  );
  assert.equal((await admin.panel.del(`/contacts/${erased.contactId}`)).status, 200);
  const afterStats = await stats();
  // The waiting send was queued (an immediate campaign, no dispatcher here): it is now cancelled; all else is equal.
  const { totals, ...rest } = before;
  assert.deepEqual(afterStats, { ...rest, totals: { ...totals, queued: totals.queued - 1, cancelled: totals.cancelled + 1 } });
});

test('after an erase the person is unknown: the same email is a new contact, and a campaign without re-entry goes to them again', async () => {
  const admin = await signedIn(t);
  const { campaignId, api, erased } = await makeErasable(t, admin.accountId);
  // Before: the campaign has reached them and re-entry is off (service-spec.md, Recipient status).
  const before = await api.post('/api/campaigns/trigger', { campaignId, lead: erased.email });
  assert.equal(before.body.status, 'rejected', JSON.stringify(before.body));
  assert.equal((await admin.panel.del(`/contacts/${erased.contactId}`)).status, 200);

  const again = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: erased.email, name: erased.name } });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.notEqual(again.body.leadId, erased.contactId);
  assert.equal(again.body.status, 'queued', 'no receipt of the erased contact counts for the new one');
});

test('a member cannot erase a contact, and nothing is erased', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  const { erased } = await makeErasable(t, admin.accountId);
  const before = await accountRowsText(t, admin.accountId);
  assertError(await member.panel.del(`/contacts/${erased.contactId}`), 403, 'Administrators only');
  assert.deepEqual(await accountRowsText(t, admin.accountId), before);
});

test("cannot erase another account's contact (404), and nothing is erased", async () => {
  const owner = await signedIn(t);
  const stranger = await signedIn(t);
  const { erased } = await makeErasable(t, owner.accountId);
  const before = await accountRowsText(t, owner.accountId);
  assertError(await stranger.panel.del(`/contacts/${erased.contactId}`), 404, 'Lead not found');
  assertError(await stranger.panel.del('/contacts/ld_unknown'), 404, 'Lead not found');
  assert.deepEqual(await accountRowsText(t, owner.accountId), before);
});

test('erasing needs the CSRF token', async () => {
  const admin = await signedIn(t);
  const { erased } = await makeErasable(t, admin.accountId);
  const res = await admin.panel.raw({ method: 'DELETE', url: `/admin/api/contacts/${erased.contactId}` });
  assertError(res, 403, 'Invalid CSRF token');
  assert.equal((await admin.panel.get(`/contacts/${erased.contactId}`)).status, 200);
});
