import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listActivity } from '../../src/modules/activity/activity.service.js';
import { setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { apiClient, assertMissingScope, startTestApp, type TestApp } from '../helpers/app.js';
import { makeKey, makeTenant, randomEmail, uniq } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

/** A tenant with one contact (and a visitor id linked to it). */
async function tenantWithContact() {
  const tenant = await makeTenant(t.db, t.config);
  const api = apiClient(t.app, tenant.key);
  const tracker = uniq('visitor-');
  const lead = await api.post('/api/leads', { email: randomEmail(), name: 'Ada Lovelace', tracker });
  assert.equal(lead.status, 200, JSON.stringify(lead.body));
  return { ...tenant, api, leadId: lead.body.id as string, tracker };
}

const activityEvents = async (accountId: string, leadId: string) =>
  (await listActivity(t.db, accountId, leadId)).items.filter((i) => i.kind === 'event');

describe('POST /api/events: recording', () => {
  test('an event by leadId answers id, leadId, type and createdAt, and shows in the activity feed', async () => {
    const c = await tenantWithContact();
    const before = Date.now();
    const res = await c.api.post('/api/events', {
      type: 'purchase',
      leadId: c.leadId,
      value: '49.90',
      metadata: { plan: 'gold', seats: 3 },
    });
    assert.equal(res.status, 200);
    assert.match(res.body.id, /^ev_[0-9a-z]+$/);
    assert.equal(res.body.leadId, c.leadId);
    assert.equal(res.body.type, 'purchase');
    assert.match(res.body.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(Date.parse(res.body.createdAt) >= before - 1);
    assert.deepEqual(Object.keys(res.body).sort(), ['createdAt', 'id', 'leadId', 'type']);
    const [item] = await activityEvents(c.accountId, c.leadId);
    assert.deepEqual(item, {
      kind: 'event',
      at: res.body.createdAt,
      id: res.body.id,
      type: 'purchase',
      value: '49.90',
      metadata: { plan: 'gold', seats: 3 },
      url: null,
    });
  });

  test('an event by tracker lands on the contact the visitor id is linked to', async () => {
    const c = await tenantWithContact();
    const res = await c.api.post('/api/events', { type: 'page_view', tracker: c.tracker });
    assert.equal(res.status, 200);
    assert.equal(res.body.leadId, c.leadId);
  });

  test('leadId wins over tracker when both are sent', async () => {
    const c = await tenantWithContact();
    const other = await c.api.post('/api/leads', { email: randomEmail(), name: 'Other Person', tracker: uniq('v-') });
    const res = await c.api.post('/api/events', { type: 'x', leadId: other.body.id, tracker: c.tracker });
    assert.equal(res.body.leadId, other.body.id);
    // And an unknown leadId is not rescued by a valid tracker.
    const missing = await c.api.post('/api/events', { type: 'x', leadId: 'ld_doesnotexist', tracker: c.tracker });
    assert.deepEqual([missing.status, missing.body.message], [404, 'Lead not found']);
  });

  test('type is stored exactly as sent, case included', async () => {
    const c = await tenantWithContact();
    await c.api.post('/api/events', { type: 'Trial_Started', leadId: c.leadId });
    await c.api.post('/api/events', { type: 'trial_started', leadId: c.leadId });
    const types = (await activityEvents(c.accountId, c.leadId)).map((e) => (e as { type: string }).type).sort();
    assert.deepEqual(types, ['Trial_Started', 'trial_started']);
  });

  test('a number or boolean value is stored as its text', async () => {
    const c = await tenantWithContact();
    await c.api.post('/api/events', { type: 'nps', leadId: c.leadId, value: 9 });
    await c.api.post('/api/events', { type: 'consent', leadId: c.leadId, value: false });
    const values = (await activityEvents(c.accountId, c.leadId)).map((e) => (e as { value: string }).value).sort();
    assert.deepEqual(values, ['9', 'false']);
  });

  test('url is stored without http(s):// (any case) and without anything from ? on', async () => {
    const c = await tenantWithContact();
    const urls = ['https://shop.example.com/cart?item=3&x=1', 'HTTP://Example.com/a/b?', 'example.org/path#top?q', 'https://example.net/'];
    for (const url of urls) assert.equal((await c.api.post('/api/events', { type: 'visit', leadId: c.leadId, url })).status, 200);
    const stored = (await activityEvents(c.accountId, c.leadId)).map((e) => (e as { url: string }).url).sort();
    assert.deepEqual(stored, ['Example.com/a/b', 'example.net/', 'example.org/path#top', 'shop.example.com/cart'].sort());
  });

  test('click needs a value; with one it is recorded', async () => {
    const c = await tenantWithContact();
    for (const body of [
      { type: 'click', leadId: c.leadId },
      { type: 'click', leadId: c.leadId, value: '' },
    ]) {
      const res = await c.api.post('/api/events', body);
      assert.equal(res.status, 400);
      assert.equal(res.body.message, 'Validation Error');
      assert.deepEqual(
        res.body.details.map((d: { path: string }) => d.path),
        ['/value'],
      );
    }
    assert.equal((await activityEvents(c.accountId, c.leadId)).length, 0, 'nothing stored');
    assert.equal((await c.api.post('/api/events', { type: 'click', leadId: c.leadId, value: 'cta-button' })).status, 200);
  });

  test('an event on an archived contact is stored and does not un-archive it', async () => {
    const c = await tenantWithContact();
    await setContactFlags(t.db, c.accountId, c.leadId, { archived: true });
    assert.equal((await c.api.post('/api/events', { type: 'x', leadId: c.leadId })).status, 200);
    const row = await t.db.kysely.selectFrom('contacts').select('archived').where('id', '=', c.leadId).executeTakeFirstOrThrow();
    assert.equal(row.archived, 1);
    assert.equal((await activityEvents(c.accountId, c.leadId)).length, 1);
  });

  test('the activity feed lists events newest first', async () => {
    const c = await tenantWithContact();
    for (const type of ['first', 'second', 'third']) {
      await c.api.post('/api/events', { type, leadId: c.leadId });
      await new Promise((r) => setTimeout(r, 3));
    }
    const types = (await activityEvents(c.accountId, c.leadId)).map((e) => (e as { type: string }).type);
    assert.deepEqual(types, ['third', 'second', 'first']);
  });
});

describe('POST /api/events: errors', () => {
  const validationPaths = (res: { body: { details: { path: string }[] } }) => res.body.details.map((d) => d.path).sort();

  test('missing or empty type is a Validation Error naming /type', async () => {
    const c = await tenantWithContact();
    for (const body of [{ leadId: c.leadId }, { type: '', leadId: c.leadId }, { type: 'x'.repeat(256), leadId: c.leadId }]) {
      const res = await c.api.post('/api/events', body);
      assert.deepEqual([res.status, res.body.message], [400, 'Validation Error']);
      assert.deepEqual(validationPaths(res), ['/type']);
    }
  });

  test('members of the wrong JSON type are Validation Errors at their path', async () => {
    const c = await tenantWithContact();
    const cases: [object, string][] = [
      [{ type: 5, leadId: c.leadId }, '/type'],
      [{ type: 'x', leadId: 12 }, '/leadId'],
      [{ type: 'x', leadId: c.leadId, metadata: ['a'] }, '/metadata'],
      [{ type: 'x', leadId: c.leadId, metadata: 'a' }, '/metadata'],
      [{ type: 'x', leadId: c.leadId, value: { a: 1 } }, '/value'],
      [{ type: 'x', leadId: c.leadId, url: 7 }, '/url'],
      [{ type: 'x', leadId: c.leadId, colour: 'red' }, '/colour'],
    ];
    for (const [body, path] of cases) {
      const res = await c.api.post('/api/events', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.message, 'Validation Error');
      assert.ok(validationPaths(res).includes(path), `${JSON.stringify(body)} -> ${JSON.stringify(res.body.details)}`);
    }
    assert.equal((await activityEvents(c.accountId, c.leadId)).length, 0);
  });

  test('metadata over 16 KiB is refused', async () => {
    const c = await tenantWithContact();
    const res = await c.api.post('/api/events', { type: 'x', leadId: c.leadId, metadata: { blob: 'a'.repeat(17 * 1024) } });
    assert.deepEqual([res.status, res.body.message, validationPaths(res)], [400, 'Validation Error', ['/metadata']]);
  });

  test('neither leadId nor tracker: 400 leadId or tracker is required', async () => {
    const c = await tenantWithContact();
    const res = await c.api.post('/api/events', { type: 'purchase' });
    assert.deepEqual(res.body, {
      statusCode: 400,
      error: 'Bad Request',
      code: 'LEAD_OR_TRACKER_REQUIRED',
      message: 'leadId or tracker is required',
    });
  });

  test('a Validation Error is reported before the missing leadId/tracker', async () => {
    const c = await tenantWithContact();
    const res = await c.api.post('/api/events', { metadata: {} });
    assert.equal(res.body.message, 'Validation Error');
  });

  test('an unknown leadId or tracker: 404 Lead not found', async () => {
    const c = await tenantWithContact();
    for (const body of [
      { type: 'x', leadId: 'ld_unknown' },
      { type: 'x', tracker: 'never-seen' },
    ]) {
      const res = await c.api.post('/api/events', body);
      assert.deepEqual(res.body, { statusCode: 404, error: 'Not Found', code: 'LEAD_NOT_FOUND', message: 'Lead not found' });
    }
  });

  test('a key without events:write is refused', async () => {
    const c = await tenantWithContact();
    const key = await makeKey(t.db, t.config, c.accountId, { scopes: ['leads:write', 'campaigns:trigger', 'leads:read'] });
    const res = await apiClient(t.app, key.key).post('/api/events', { type: 'x', leadId: c.leadId });
    assertMissingScope(res, 'events:write');
  });
});

describe('POST /api/events: tenant isolation', () => {
  test("account A's key cannot log an event on account B's contact, by id or by tracker", async () => {
    const a = await tenantWithContact();
    const b = await tenantWithContact();
    for (const body of [
      { type: 'x', leadId: b.leadId },
      { type: 'x', tracker: b.tracker },
    ]) {
      const res = await a.api.post('/api/events', body);
      assert.deepEqual([res.status, res.body.message], [404, 'Lead not found']);
    }
    assert.equal((await activityEvents(b.accountId, b.leadId)).length, 0);
  });
});
