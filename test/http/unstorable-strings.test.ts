import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeUser, type Panel, signIn } from '../admin/helpers.js';
import { listTables, rowCounts } from '../fuzz/harness.js';
import { type ApiResponse, apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign } from '../helpers/herald.js';

/**
 * U+0000 or a lone surrogate anywhere in a request to the API is a 400 Validation Error naming
 * the member, on both engines (both found by the fuzz suite: PostgreSQL answered 500 to a NUL and
 * SQLite stored it; the email validator threw on a lone surrogate, a 500 on either engine).
 */
const NUL = 'must not contain the NUL character (U+0000)';
const LONE_SURROGATE = 'must be well-formed Unicode (it contains a lone surrogate)';

let t: TestApp;
let api: ReturnType<typeof apiClient>;
let panel: Panel;
let campaignId: string;

before(async () => {
  t = await startTestApp();
  const tenant = await makeTenant(t.db, t.config);
  api = apiClient(t.app, tenant.key);
  campaignId = (await makeEmailCampaign(t, tenant.accountId)).id;
  panel = await signIn(t, (await makeUser(t)).email);
});
after(async () => {
  await t.close();
});

async function assertRefused(call: () => Promise<ApiResponse | { status: number; body: any }>, path: string, message = NUL) {
  const tables = await listTables(t.db);
  const before = await rowCounts(t.db, tables);
  const res = await call();
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.deepEqual(res.body, {
    statusCode: 400,
    error: 'Bad Request',
    code: 'VALIDATION_ERROR',
    message: 'Validation Error',
    details: [{ path, message }],
  });
  assert.deepEqual(await rowCounts(t.db, tables), before, 'nothing is written');
}

test('a NUL in a contact member, a nested member or an object key is refused', async () => {
  await assertRefused(() => api.post('/api/leads', { email: randomEmail(), name: 'Ada\u0000' }), '/name');
  await assertRefused(() => api.post('/api/leads', { email: randomEmail(), name: 'Ada', tags: ['ok', 'b\u0000d'] }), '/tags/1');
  await assertRefused(
    () => api.post('/api/leads', { email: randomEmail(), name: 'Ada', metadata: { 'a/b\u0000': 1 } }),
    '/metadata/a~1b\u0000',
  );
});

test('a NUL in an event, a trigger lead or a GET query parameter is refused', async () => {
  await assertRefused(() => api.post('/api/events', { leadId: 'ld_\u0000', type: 'visit' }), '/leadId');
  await assertRefused(
    () => api.post('/api/campaigns/trigger', { campaignId, lead: { email: randomEmail(), name: 'N\u0000' } }),
    '/lead/name',
  );
  await assertRefused(() => api.get(`/api/campaigns/cancel?campaignId=${campaignId}&lead=a%00%40example.com`), '/lead');
});

test('a NUL in an admin path parameter or sign-in email is refused', async () => {
  await assertRefused(() => panel.get('/keys/%00/value'), '/id');
  await assertRefused(() => panel.post('/login', { email: 'a\u0000@example.com', password: 'x' }), '/email');
});

test('a lone surrogate in a contact, an event, a trigger lead or an object key is refused', async () => {
  await assertRefused(() => api.post('/api/leads', { email: 'a\ud800@example.com', name: 'Ada' }), '/email', LONE_SURROGATE);
  await assertRefused(() => api.post('/api/leads', { email: randomEmail(), name: 'Ada \udc00' }), '/name', LONE_SURROGATE);
  await assertRefused(
    () => api.post('/api/leads', { email: randomEmail(), name: 'Ada', metadata: { 'k\ud83d': 1 } }),
    '/metadata/k\ud83d',
    LONE_SURROGATE,
  );
  await assertRefused(() => api.post('/api/events', { leadId: 'ld_1', type: 'visit\ud800' }), '/type', LONE_SURROGATE);
  await assertRefused(
    () => api.post('/api/campaigns/trigger', { campaignId, lead: { email: '\ud800@example.com', name: 'Ada' } }),
    '/lead/email',
    LONE_SURROGATE,
  );
});

test('a surrogate pair (an emoji) is a character like any other', async () => {
  const res = await api.post('/api/leads', { email: randomEmail(), name: 'Ada \ud83d\ude00' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
});

test('a lone surrogate in an admin body is refused (a user email answered 500)', async () => {
  await assertRefused(
    () => panel.post('/users', { email: 'a\ud800@example.com', password: 'long enough', role: 'member' }),
    '/email',
    LONE_SURROGATE,
  );
});
