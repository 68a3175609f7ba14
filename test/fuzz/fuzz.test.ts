/**
 * Property-based fuzzing of every public endpoint and every admin API route (issue 8): generated
 * requests over real HTTP, with and without valid credentials. Properties, for every case:
 * never a 5xx; every 4xx is the error body of decisions.md; a 4xx changes no table's row count;
 * the service still answers a normal request afterwards.
 *
 * Replay a failure with the seed this file prints: `FUZZ_SEED=<seed> npm test` (or run this
 * file alone); FUZZ_RUNS sets the cases per suite, FUZZ_SHRINK=1 shrinks a failure to a minimal case.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { openSession, readSession } from '../../src/modules/admin/auth/sessions.js';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { createSegment } from '../../src/modules/segments/segments.service.js';
import { makeUser } from '../admin/helpers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeField, makeKey, makeKpi, makeTenant, randomEmail, uniq } from '../helpers/factories.js';
import { makeEmailCampaign } from '../helpers/herald.js';
import {
  assertErrorBody,
  assertUnchanged,
  closeAgents,
  type FuzzRequest,
  type FuzzResponse,
  listTables,
  rowCounts,
  runAddress,
  send,
  tablesA4xxMayChange,
} from './harness.js';
import { fromValue } from './json-text.js';
import { type RequestSpace, type RouteCase, routeCaseArb } from './requests.js';
import { type Route, registeredRoutes } from './routes.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
/** Cases per suite (public API, admin API): together a few thousand, about a minute on two cores. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);
const SHRINK = process.env.FUZZ_SHRINK === '1';

let t: TestApp;
let port: number;
let tables: string[];
// Random per run, not per seed: a replay must not meet the throttles its first run left behind.
const address = runAddress(Math.floor(Math.random() * 2 ** 31));

before(async () => {
  // The key rate limit would answer 429 to the fuzzer's pace; 429 is covered by its own tests.
  t = await startTestApp({ RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as { port: number }).port;
  tables = await listTables(t.db);
  console.log(`fuzz: seed ${SEED}, ${RUNS} cases per suite, from ${address} (replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);
});

/** Accounts the suites made: their due sends are cancelled at the end (see after()). */
const fuzzAccounts: string[] = [];

after(async () => {
  closeAgents();
  // On a shared PostgreSQL database, the workers of later test files would otherwise deliver
  // the sends the fuzzer queued, and wait for them.
  if (t && fuzzAccounts.length > 0) {
    await t.db.kysely
      .updateTable('sends')
      .set({ status: 'cancelled' })
      .where('account_id', 'in', fuzzAccounts)
      .where('status', 'in', ['queued', 'pending'])
      .execute();
  }
  await t?.close();
});

const isPublic = (r: Route) => r.url.startsWith('/api/');
const isAdminApi = (r: Route) => r.url.startsWith('/admin/api/');

/** The app's own routes plus the GET forms the spec names for /api/leads and /api/events (405 today). */
function publicRoutes(): Route[] {
  const routes = registeredRoutes(t.app).filter(isPublic);
  for (const url of ['/api/leads', '/api/events'])
    if (!routes.some((r) => r.url === url && r.method === 'GET')) routes.push({ method: 'GET', url, weight: 1 });
  return routes;
}

const describe = (c: RouteCase, req: FuzzRequest, res?: FuzzResponse) =>
  `${c.credentials}: ${req.method} ${req.path.slice(0, 300)}\n` +
  `headers ${JSON.stringify(req.headers)}\n` +
  `body ${req.body === undefined ? '(none)' : JSON.stringify(req.body.toString('utf8').slice(0, 500))}\n` +
  (res ? `answered ${res.status} ${res.text.slice(0, 500)}` : '');

/**
 * Runs the properties over `cases` generated requests. `credentials` turns a credential name into
 * headers and query entries; `healthy` sends a normal request and checks its answer (true when
 * it had to add or remove rows first, e.g. to open a session again).
 */
async function fuzz(
  space: RequestSpace,
  credentials: (name: string) => { headers: Record<string, string>; query: string },
  healthy: () => Promise<boolean>,
): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let counts = await rowCounts(t.db, tables);
  await fc.assert(
    fc.asyncProperty(routeCaseArb(space), async (c) => {
      const { headers, query } = credentials(c.credentials);
      const path = query ? `${c.request.path}${c.request.path.includes('?') ? '&' : '?'}${query}` : c.request.path;
      const req: FuzzRequest = { ...c.request, path, headers: { ...c.request.headers, ...headers } };
      const res = await send(port, address, req);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      try {
        assert.ok(res.status < 500, 'never a 5xx');
        const now = await rowCounts(t.db, tables);
        if (res.status >= 400) {
          assertErrorBody(req, res);
          assertUnchanged(counts, now, tablesA4xxMayChange(c.route.url));
        }
        counts = now;
        if (await healthy()) counts = await rowCounts(t.db, tables);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${describe(c, req, res)}`, { cause: err });
      }
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: !SHRINK, includeErrorInReport: true },
  );
  return statuses;
}

test('fuzz: the public API answers every generated request with a 2xx or an exact 4xx', async (ctx) => {
  const tenant = await makeTenant(t.db, t.config);
  const other = await makeTenant(t.db, t.config);
  fuzzAccounts.push(tenant.accountId, other.accountId);
  const eventsOnly = await makeKey(t.db, t.config, tenant.accountId, { scopes: ['events:write'] });
  const inactive = await makeKey(t.db, t.config, tenant.accountId, { active: false });
  for (const [name, type] of [
    ['city', 'string'],
    ['birthday', 'date'],
    ['size', 'number'],
    ['vip', 'boolean'],
    ['list', 'array'],
    ['where', 'location'],
    ['mobile', 'phone'],
  ] as const) {
    await makeField(t.db, tenant.accountId, name, type);
  }
  await makeKpi(t.db, tenant.accountId, 'score');
  const campaign = await makeEmailCampaign(t, tenant.accountId);
  const delayed = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 3600 });
  const otherCampaign = await makeEmailCampaign(t, other.accountId);
  const email = randomEmail();
  const contact = await writeContact(t.db, tenant.accountId, { email, name: 'Fuzz Lead', tracker: uniq('trk') });
  const otherContact = await writeContact(t.db, other.accountId, { email: randomEmail(), name: 'Other Lead' });

  const lead = {
    email,
    name: 'Fuzz Lead',
    phone: '+33612345678',
    tags: ['Black Friday'],
    tagsRemove: ['old'],
    fields: [
      { key: 'city', value: 'Paris' },
      { key: 'birthday', value: '31/12/1990' },
      { key: 'list', value: ['a'] },
    ],
    kpis: { score: 1.5 },
    metadata: { plan: 'pro' },
    note: { text: 'hello', createdBy: 'fuzz' },
    tracker: 'trk-fuzz',
  };
  const space: RequestSpace = {
    routes: publicRoutes(),
    bodies: {
      'POST /api/leads': fromValue(lead),
      'POST /api/events': fromValue({
        leadId: contact.id,
        type: 'click',
        value: 'buy',
        url: 'https://acme.test/a?b=c',
        metadata: { a: 1 },
        timestamp: new Date(Date.now() - 60_000).toISOString(),
      }),
      'POST /api/leads/batch': fromValue({ items: [lead, { email: randomEmail(), name: 'Second Lead', kpis: { score: '2' } }] }),
      'POST /api/events/batch': fromValue({
        items: [
          { leadId: contact.id, type: 'visit', metadata: { a: 1 } },
          { tracker: 'trk-fuzz', type: 'click', value: 'x' },
        ],
      }),
      'POST /api/campaigns/trigger': fromValue({ campaignId: campaign.id, lead: { ...lead, email: randomEmail() } }),
      'POST /api/campaigns/cancel': fromValue({ campaignId: delayed.id, lead: email }),
    },
    queries: {
      'GET /api/leads': [['email', email]],
      'GET /api/campaigns/trigger': [
        ['campaignId', delayed.id],
        ['lead', email],
      ],
      'GET /api/campaigns/cancel': [
        ['campaignId', delayed.id],
        ['lead', email],
      ],
    },
    ids: [campaign.id, delayed.id, contact.id, email, otherCampaign.id, otherContact.id, tenant.keyId],
    credentials: [
      'header',
      'header',
      'header',
      'bearer',
      'query',
      'query twice',
      'query[]',
      'header and wrong query',
      'events-only key',
      'inactive key',
      'unknown key',
      'empty key',
      'none',
      'other tenant',
    ],
  };
  const credentials = (name: string) => {
    const h = (key: string) => ({ headers: { 'x-service-api-key': key }, query: '' });
    const q = (query: string) => ({ headers: {}, query });
    switch (name) {
      case 'header':
        return h(tenant.key);
      case 'bearer':
        return { headers: { authorization: `Bearer ${tenant.key}` }, query: '' };
      case 'query':
        return q(`api-key=${tenant.key}`);
      case 'query twice':
        return q(`api-key=${tenant.key}&api-key=${tenant.key}`);
      case 'query[]':
        return q(`api-key[]=${tenant.key}`);
      case 'header and wrong query':
        return { headers: { 'x-service-api-key': tenant.key }, query: 'api-key=hk_wrong' };
      case 'events-only key':
        return h(eventsOnly.key);
      case 'inactive key':
        return h(inactive.key);
      case 'unknown key':
        return h(`hk_${uniq('')}${'0'.repeat(30)}`);
      case 'empty key':
        return h('');
      case 'other tenant':
        return h(other.key);
      default:
        return { headers: {}, query: '' };
    }
  };
  // A normal request: cancel of the immediate campaign reads key, campaign and contact, and writes nothing.
  const healthy = async () => {
    const res = await send(port, address, {
      method: 'GET',
      path: `/api/campaigns/cancel?campaignId=${campaign.id}&lead=${encodeURIComponent(email)}`,
      headers: { 'x-service-api-key': tenant.key },
    });
    assert.equal(res.status, 200, `the service still answers a normal request: ${res.text}`);
    assert.equal(JSON.parse(res.text).leadId, contact.id);
    return false;
  };
  const statuses = await fuzz(space, credentials, healthy);
  ctx.diagnostic(`seed ${SEED}; statuses ${JSON.stringify(statuses)}`);
  if (RUNS >= 100) assert.ok(statuses[200]! > 0 && statuses[400]! > 0, 'the generator reaches both the handlers and the validation');
});

test('fuzz: the admin API answers every generated request with a 2xx or an exact 4xx', async (ctx) => {
  const admin = await makeUser(t, { role: 'admin' });
  fuzzAccounts.push(admin.accountId);
  const member = await makeUser(t, { role: 'member', accountId: admin.accountId });
  const spare = await makeUser(t, { role: 'member', accountId: admin.accountId });
  const spareKey = await makeKey(t.db, t.config, admin.accountId);
  const campaign = await makeEmailCampaign(t, admin.accountId);
  const contact = await writeContact(t.db, admin.accountId, { email: randomEmail(), name: 'Panel Lead' });
  const segment = await createSegment(t.db, admin.accountId, { name: 'Fuzz segment', criteria: { tags: ['vip'] } });
  const other = await makeTenant(t.db, t.config);
  const otherCampaign = await makeEmailCampaign(t, other.accountId);

  // Sessions are opened directly: the fuzzer's own sign-ins may be throttled by its failed ones.
  const sessions: Record<'admin' | 'member', { token: string; csrf: string }> = {
    admin: { token: '', csrf: '' },
    member: { token: '', csrf: '' },
  };
  const ensureSessions = async () => {
    let opened = false;
    for (const [role, user] of [
      ['admin', admin],
      ['member', member],
    ] as const) {
      const known = sessions[role].token ? await readSession(t.db, sessions[role].token, Date.now()) : undefined;
      if (known) continue;
      const { token } = await openSession(t.db, { id: user.userId, accountId: user.accountId }, Date.now());
      sessions[role] = { token, csrf: (await readSession(t.db, token, Date.now()))!.session.csrfToken };
      opened = true;
    }
    return opened;
  };
  await ensureSessions();

  const campaignBody = {
    name: 'Fuzz campaign',
    channel: 'email',
    from: 'Acme <news@acme.test>',
    subject: 'Hi {{ contact.name }}',
    html: '<p>Hi</p>',
    text: 'Hi',
    mode: 'delay',
    delaySeconds: 60,
    reentry: true,
    cooldownDays: 1,
    active: false,
    webhooks: ['https://hooks.acme.test/x'],
  };
  // Segment criteria with every kind of condition (groups, negation, comparisons, KPIs).
  const criteria = {
    groups: [
      {
        events: [{ type: 'click', withinDays: 30, metadata: { key: 'a', value: 'b' }, negated: true }],
        tags: ['vip'],
        fields: [{ name: 'city', op: 'between', value: 'Paris', to: 'Rome' }],
        kpis: [{ id: 'purchases', op: 'gte', value: 2 }],
      },
      {},
    ],
  };
  const space: RequestSpace = {
    routes: registeredRoutes(t.app).filter(isAdminApi),
    bodies: {
      'POST /admin/api/login': fromValue({ email: randomEmail(), password: 'not the password' }),
      'PATCH /admin/api/account': fromValue({ whatsapp: { phoneNumberId: '123', token: 'tok', appSecret: 'sec' } }),
      'POST /admin/api/users': fromValue({ email: randomEmail(), password: 'a long enough password', role: 'member' }),
      'POST /admin/api/keys': fromValue({ name: 'fuzz key', scopes: ['leads:write'], active: true, expiresAt: '2030-01-01T00:00:00.000Z' }),
      'PATCH /admin/api/keys/:id': fromValue({ name: 'renamed', scopes: ['events:write'], active: true, expiresAt: null }),
      'POST /admin/api/fields': fromValue({ name: uniq('field'), type: 'String' }),
      'POST /admin/api/kpis': fromValue({ id: uniq('kpi'), name: 'KPI' }),
      'PATCH /admin/api/fields/:id': fromValue({ name: 'Renamed field' }),
      'PATCH /admin/api/kpis/:id': fromValue({ name: 'Renamed KPI' }),
      'POST /admin/api/campaigns': fromValue(campaignBody),
      'PATCH /admin/api/campaigns/:id': fromValue({ name: 'Renamed', subject: null }),
      'POST /admin/api/campaigns/:id/preview': fromValue({ contactId: contact.id, campaign: { subject: '{{ contact.email }}' } }),
      'POST /admin/api/campaigns/:id/test-send': fromValue({ contactId: contact.id }),
      'POST /admin/api/segments': fromValue({ name: 'Segment', criteria }),
      'PUT /admin/api/segments/:id': fromValue({ name: 'Segment', criteria }),
      'POST /admin/api/segments/preview': fromValue({ criteria }),
      'PATCH /admin/api/contacts/:id': fromValue({ archived: false, optedOut: false }),
      'POST /admin/api/contacts/:id/notes': fromValue({ text: 'a note' }),
    },
    queries: {
      'GET /admin/api/contacts': [
        ['q', 'lead'],
        ['tag', 'vip'],
        ['archived', 'false'],
        ['limit', '10'],
      ],
      'GET /admin/api/contacts/:id/activity': [
        ['limit', '5'],
        ['before', '2030-01-01T00:00:00.000Z'],
      ],
      'GET /admin/api/outbox': [
        ['campaignId', campaign.id],
        ['limit', '5'],
      ],
      'GET /admin/api/campaigns/:id/stats': [['days', '7']],
      'GET /admin/api/campaigns/:id/webhook-deliveries': [['limit', '5']],
      'GET /admin/api/segments/:id/contacts': [['limit', '5']],
    },
    ids: [campaign.id, contact.id, segment.id, spare.userId, spareKey.id, otherCampaign.id, other.keyId, 'me'],
    credentials: [
      'admin',
      'admin',
      'admin',
      'admin',
      'member',
      'admin without csrf',
      'admin wrong csrf',
      'admin cookie twice',
      'garbage cookie',
      'none',
    ],
  };
  const credentials = (name: string) => {
    const { admin: a, member: m } = sessions;
    const cookie = (token: string, csrf?: string) => ({
      headers: { cookie: `herald_session=${token}`, ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }) },
      query: '',
    });
    switch (name) {
      case 'admin':
        return cookie(a.token, a.csrf);
      case 'member':
        return cookie(m.token, m.csrf);
      case 'admin without csrf':
        return cookie(a.token);
      case 'admin wrong csrf':
        return cookie(a.token, m.csrf);
      case 'admin cookie twice':
        return { headers: { cookie: `herald_session=${m.token}x; herald_session=${a.token}`, 'x-csrf-token': a.csrf }, query: '' };
      case 'garbage cookie':
        return cookie('garbage', 'garbage');
      default:
        return { headers: {}, query: '' };
    }
  };
  // A normal request: the panel's "who am I" (a fuzzed sign-out ends a session: open it again first).
  const healthy = async () => {
    const opened = await ensureSessions();
    const res = await send(port, address, {
      method: 'GET',
      path: '/admin/api/session',
      headers: { cookie: `herald_session=${sessions.admin.token}` },
    });
    assert.equal(res.status, 200, `the service still answers a normal request: ${res.text}`);
    assert.equal(JSON.parse(res.text).user.email, admin.email);
    return opened;
  };
  const statuses = await fuzz(space, credentials, healthy);
  ctx.diagnostic(`seed ${SEED}; statuses ${JSON.stringify(statuses)}`);
  if (RUNS >= 100) assert.ok(statuses[200]! > 0 && statuses[400]! > 0, 'the generator reaches both the handlers and the validation');
});
