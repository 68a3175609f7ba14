import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { listOutbox } from '../../src/channels/transports.js';
import type { Db } from '../../src/db/connect.js';
import { type Panel, type Reply, signedIn } from '../admin/helpers.js';
import { listTables } from '../fuzz/harness.js';
import { type Route, registeredRoutes } from '../fuzz/routes.js';
import { apiClient } from '../helpers/app.js';
import {
  makeContact,
  makeEmailCampaign,
  makeField,
  makeKey,
  makeKpi,
  makeSegment,
  randomEmail,
  randomPhone,
  uniq,
} from '../helpers/factories.js';
import { startService, type TestService } from '../helpers/harness.js';
import { eventually, sendRow } from '../helpers/herald.js';

/**
 * Tenant isolation for EVERY route (design.md): account B, with its own valid key and its own
 * admin session, aims each keyed public route and each session admin route at account A's ids.
 * Another account's id must answer exactly like an unknown one (404 and the resource's message,
 * or the spec's equivalent noted below), never 200 or 403 with A's data, and no row of account A
 * may change.
 *
 * The routes come from the app's own route table (as the fuzz suite reads it), so a new route is
 * covered without anyone remembering to: a route with `:id` is aimed at A's resource of the path
 * segment before it (OWNED); any other route must be listed in ID_IN_BODY_OR_QUERY or WITHOUT_IDS.
 * A route the test does not know how to fill fails it: add one line below.
 */

interface Tenant {
  accountId: string;
  key: string;
  keyId: string;
  keyName: string;
  userId: string;
  email: string;
  panel: Panel;
  contactId: string;
  contactEmail: string;
  contactPhone: string;
  campaignId: string;
  campaignName: string;
  segmentId: string;
  segmentName: string;
  fieldId: string;
  fieldName: string;
  kpiId: string;
  sendId: string;
  messageId: string;
}

/** A's resource of each path segment followed by `:id` (`/admin/api/keys/:id` is A's key). */
const OWNED: Record<string, { id: (a: Tenant) => string; notFound: string }> = {
  segments: { id: (a) => a.segmentId, notFound: 'Segment not found' },
  users: { id: (a) => a.userId, notFound: 'User not found' },
  keys: { id: (a) => a.keyId, notFound: 'API key not found' },
  campaigns: { id: (a) => a.campaignId, notFound: 'Campaign not found' },
  contacts: { id: (a) => a.contactId, notFound: 'Lead not found' },
  leads: { id: (a) => a.contactId, notFound: 'Lead not found' },
  outbox: { id: (a) => a.messageId, notFound: 'Message not found' },
  fields: { id: (a) => a.fieldId, notFound: 'Custom field not found' },
  kpis: { id: (a) => a.kpiId, notFound: 'KPI not found' },
};

/** A valid body for the `:id` routes that take one, so the answer is about the id, not the body. */
const BODIES: Record<string, (a: Tenant, b: Tenant) => unknown> = {
  'PUT /admin/api/segments/:id': () => ({ name: 'Stolen', criteria: {} }),
  'PATCH /admin/api/keys/:id': () => ({ active: false, name: 'stolen' }),
  'PATCH /admin/api/campaigns/:id': () => ({ name: 'Stolen', active: false }),
  'POST /admin/api/campaigns/:id/preview': (_a, b) => ({ contactId: b.contactId }),
  'POST /admin/api/campaigns/:id/test-send': (_a, b) => ({ contactId: b.contactId }),
  'PATCH /admin/api/contacts/:id': () => ({ optedOut: true, archived: true }),
  'POST /admin/api/contacts/:id/notes': () => ({ text: 'planted' }),
  'POST /admin/api/contacts/:id/suppressions/lift': (a) => ({ address: a.contactEmail }),
  'PATCH /admin/api/fields/:id': () => ({ name: 'Stolen' }),
  'PATCH /admin/api/kpis/:id': () => ({ name: 'Stolen' }),
  'PATCH /admin/api/users/:id': () => ({ role: 'member' }),
  'POST /admin/api/users/:id/password': () => ({ password: 'a stolen password' }),
  'POST /admin/api/contacts/:id/edit': () => ({ name: 'Stolen Name' }),
};

/** One request of B at A's ids, and what it must answer. */
interface Probe {
  url: string;
  payload?: unknown;
  check(res: Reply): void;
}

const notFound = (message: string) => (res: Reply) => {
  assert.equal(res.status, 404, JSON.stringify(res.body));
  assert.equal(res.body.message, message, JSON.stringify(res.body));
};

const withQuery = (path: string, query: Record<string, string>) => `${path}?${new URLSearchParams(query)}`;

/** The routes without `:id` that take an id (or an address) in their body or query. */
const ID_IN_BODY_OR_QUERY: Record<string, (a: Tenant, b: Tenant) => Probe[]> = {
  // service-spec.md, POST /api/leads: an unknown id is a new contact, which then needs an address.
  'POST /api/leads': (a) => [
    {
      url: '/api/leads',
      payload: { id: a.contactId, name: 'Rename A' },
      check: (res) => {
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.deepEqual(
          res.body.details.map((d: { path: string }) => d.path),
          ['/email'],
        );
      },
    },
    {
      url: '/api/leads',
      payload: { id: a.contactId, email: `${uniq('b')}@example.com`, name: 'Hijack Attempt', tags: ['b'] },
      check: (res) => {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.created, true, 'a contact of B, not A');
        assert.notEqual(res.body.id, a.contactId);
      },
    },
  ],
  'GET /api/leads': (a) =>
    ([{ email: a.contactEmail }, { phone: a.contactPhone }] as Record<string, string>[]).map((query) => ({
      url: withQuery('/api/leads', query),
      check: notFound('Lead not found'),
    })),
  'POST /api/events': (a) => [{ url: '/api/events', payload: { type: 'visit', leadId: a.contactId }, check: notFound('Lead not found') }],
  // The batches answer each item as its single call: A's ids are as unknown as made-up ones, per item.
  'POST /api/leads/batch': (a) => [
    {
      url: '/api/leads/batch',
      payload: {
        items: [
          { id: a.contactId, name: 'Rename A' },
          { id: a.contactId, email: `${uniq('b')}@example.com`, name: 'Hijack Attempt', tags: ['b'] },
        ],
      },
      check: (res) => {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const [byId, byEmail] = res.body.results;
        assert.equal(byId.status, 400, JSON.stringify(byId));
        assert.deepEqual(
          byId.body.details.map((d: { path: string }) => d.path),
          ['/email'],
        );
        assert.equal(byEmail.status, 200, JSON.stringify(byEmail));
        assert.equal(byEmail.body.created, true, 'a contact of B, not A');
        assert.notEqual(byEmail.body.id, a.contactId);
      },
    },
  ],
  'POST /api/events/batch': (a) => [
    {
      url: '/api/events/batch',
      payload: {
        items: [
          { type: 'visit', leadId: a.contactId },
          { type: 'visit', leadId: a.contactId, value: 'again' },
        ],
      },
      check: (res) => {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        for (const item of res.body.results) assert.deepEqual([item.status, item.body.message], [404, 'Lead not found']);
      },
    },
  ],
  'POST /api/campaigns/trigger': (a, b) => leadProbes('/api/campaigns/trigger', a, b),
  'GET /api/campaigns/trigger': (a, b) => leadQueryProbes('/api/campaigns/trigger', a, b),
  'POST /api/campaigns/cancel': (a, b) => leadProbes('/api/campaigns/cancel', a, b),
  'GET /api/campaigns/cancel': (a, b) => leadQueryProbes('/api/campaigns/cancel', a, b),
  // The preview of a campaign not saved yet names only a contact: A's is unknown to B.
  'POST /admin/api/campaigns/preview': (a) => [
    {
      url: '/admin/api/campaigns/preview',
      payload: { contactId: a.contactId, campaign: { channel: 'email', html: '{{ contact.name }}' } },
      check: notFound('Lead not found'),
    },
  ],
  // Searching for A's contact finds nothing of B's account: no count, no line of the export.
  'GET /admin/api/contacts/count': (a) => [
    {
      url: withQuery('/admin/api/contacts/count', { q: a.contactEmail }),
      check: (res) => assert.deepEqual([res.status, res.body.total ?? res.body.count], [200, 0], JSON.stringify(res.body)),
    },
  ],
  'GET /admin/api/contacts/export': (a) => [
    {
      url: withQuery('/admin/api/contacts/export', { q: a.contactEmail }),
      check: (res) => {
        assert.equal(res.status, 200);
        assert.ok(!JSON.stringify(res.body).includes(a.contactEmail), "no line names A's contact");
      },
    },
  ],
  // An import row naming A's contact id is a new contact of B's, which then needs an address.
  'POST /admin/api/contacts/import': (a) => [
    {
      url: '/admin/api/contacts/import',
      payload: { items: [{ id: a.contactId, name: 'Rename A' }] },
      check: (res) => {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(
          res.body.results[0].body.details.map((d: { path: string }) => d.path),
          ['/email'],
        );
      },
    },
  ],
  // A filter naming another account's campaign filters down to nothing (docs/admin-api.md, Outbox).
  'GET /admin/api/outbox': (a) => [
    {
      url: withQuery('/admin/api/outbox', { campaignId: a.campaignId }),
      check: (res) => {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body.items, []);
      },
    },
  ],
};

/** Trigger and cancel: A's campaign with B's contact, and B's campaign with A's contact (by id and by email). */
function leadProbes(url: string, a: Tenant, b: Tenant): Probe[] {
  return [
    { url, payload: { campaignId: a.campaignId, lead: b.contactId }, check: notFound('Campaign not found') },
    { url, payload: { campaignId: b.campaignId, lead: a.contactId }, check: notFound('Lead not found') },
    { url, payload: { campaignId: b.campaignId, lead: a.contactEmail }, check: notFound('Lead not found') },
  ];
}

/** The GET forms: `lead` is an email there. */
function leadQueryProbes(path: string, a: Tenant, b: Tenant): Probe[] {
  return [
    { url: withQuery(path, { campaignId: a.campaignId, lead: b.contactEmail }), check: notFound('Campaign not found') },
    { url: withQuery(path, { campaignId: b.campaignId, lead: a.contactEmail }), check: notFound('Lead not found') },
  ];
}

/**
 * Keyed and session routes that name no resource of another account: B's reads of them must
 * not show anything of A (checked for every GET here); writes are B's own (not sent: logout
 * would end B's session, the others create B's resources).
 */
const WITHOUT_IDS = new Set([
  'POST /admin/api/login',
  'POST /admin/api/logout',
  'GET /admin/api/session',
  'GET /admin/api/openapi.json',
  'GET /admin/api/account',
  'PATCH /admin/api/account',
  'GET /admin/api/users',
  'POST /admin/api/users',
  'GET /admin/api/keys',
  'POST /admin/api/keys',
  'GET /admin/api/fields',
  'POST /admin/api/fields',
  'GET /admin/api/kpis',
  'POST /admin/api/kpis',
  'GET /admin/api/segments',
  'POST /admin/api/segments',
  'POST /admin/api/segments/preview',
  'GET /admin/api/campaigns',
  'POST /admin/api/campaigns',
  'GET /admin/api/contacts',
  'GET /admin/api/message-frame',
  'POST /admin/api/profile/password',
]);

const isKeyed = (r: Route) => r.url.startsWith('/api/');
const isSession = (r: Route) => r.url.startsWith('/admin/api/');
const routeKey = (r: Route) => `${r.method} ${r.url}`;

let t: TestService;
let a: Tenant;
let b: Tenant;
before(async () => {
  t = await startService();
  a = await tenant();
  b = await tenant();
  // A's message in the outbox: A triggers its campaign with its key, the dispatcher delivers.
  const res = await apiClient(t.app, a.key).post('/api/campaigns/trigger', { campaignId: a.campaignId, lead: a.contactId });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  a.sendId = res.body.sendId;
  await eventually(async () => (await sendRow(t.db, a.sendId)).status === 'sent', 10_000, "A's send");
  a.messageId = (
    await eventually(async () => (await listOutbox(t.db, a.accountId, { campaignId: a.campaignId })).items[0], 5000, "A's message")
  ).id;
});
after(() => t?.close());

/** An account with one of each resource, made through the factories (services) and a signed-in admin. */
async function tenant(): Promise<Tenant> {
  const user = await signedIn(t);
  const keyName = uniq('key ');
  const key = await makeKey(t.db, t.config, user.accountId, { name: keyName });
  const contactPhone = randomPhone();
  const contact = await makeContact(t.db, user.accountId, { name: uniq('Contact '), email: randomEmail(), phone: contactPhone });
  const campaignName = uniq('Campaign ');
  const { id: campaignId } = await makeEmailCampaign(t, user.accountId, { name: campaignName });
  const segmentName = uniq('Segment ');
  const segment = await makeSegment(t.db, user.accountId, { name: segmentName, criteria: { tags: ['vip'] } });
  const fieldName = uniq('Field ');
  const field = await makeField(t.db, user.accountId, fieldName, 'string');
  const kpiId = uniq('kpi_');
  await makeKpi(t.db, user.accountId, kpiId);
  return {
    accountId: user.accountId,
    key: key.key,
    keyId: key.id,
    keyName,
    userId: user.userId,
    email: user.email,
    panel: user.panel,
    contactId: contact.id,
    contactEmail: contact.email!,
    contactPhone,
    campaignId,
    campaignName,
    segmentId: segment.id,
    segmentName,
    fieldId: field.id,
    fieldName,
    kpiId,
    sendId: '',
    messageId: '',
  };
}

/** What identifies A's data in a response: none of it may reach B. */
const secretsOf = (x: Tenant) => [
  x.accountId,
  x.keyId,
  x.key,
  x.keyName,
  x.userId,
  x.email,
  x.contactId,
  x.contactEmail,
  x.contactPhone,
  x.campaignId,
  x.campaignName,
  x.segmentId,
  x.segmentName,
  x.fieldId,
  x.fieldName,
  x.kpiId,
  x.sendId,
  x.messageId,
];

/** Every probe B makes for one route; throws when the route is not known to this test. */
function probesFor(route: Route): Probe[] {
  const key = routeKey(route);
  if (ID_IN_BODY_OR_QUERY[key]) return ID_IN_BODY_OR_QUERY[key]!(a, b);
  const params = [...route.url.matchAll(/\/([^/]+)\/:([^/]+)/g)];
  if (params.length === 0) {
    if (WITHOUT_IDS.has(key))
      return route.method === 'GET' ? [{ url: route.url, check: (res) => assert.equal(res.status, 200, JSON.stringify(res.body)) }] : [];
    assert.fail(
      `${key}: not known to the cross-tenant test: add it to ID_IN_BODY_OR_QUERY (it takes an id) or WITHOUT_IDS (it takes none)`,
    );
  }
  let url = route.url;
  let owned: (typeof OWNED)[string] | undefined;
  for (const [, resource, param] of params) {
    owned = param === 'id' ? OWNED[resource!] : undefined;
    if (!owned) assert.fail(`${key}: the cross-tenant test does not know whose :${param} this is: add '${resource}' to OWNED`);
    url = url.replace(`:${param}`, encodeURIComponent(owned.id(a)));
  }
  const body = BODIES[key];
  return [{ url, payload: body?.(a, b), check: notFound(owned!.notFound) }];
}

async function callAsB(method: string, probe: Probe, session: boolean): Promise<Reply> {
  const options: InjectOptions = {
    method: method as InjectOptions['method'],
    url: probe.url,
    ...(probe.payload === undefined ? {} : { payload: probe.payload as object }),
  };
  if (session) return b.panel.raw({ ...options, headers: { 'x-csrf-token': b.panel.csrf } });
  const res = await apiClient(t.app, b.key).call(options);
  return { ...res, cookies: [] };
}

/** Every row of the account, in every table that has an account_id (and its accounts row). */
async function accountRows(db: Db, accountId: string): Promise<Record<string, string[]>> {
  const snapshot: Record<string, string[]> = {};
  for (const table of await listTables(db)) {
    const column = table === 'accounts' ? 'id' : (await columnsOf(db, table)).includes('account_id') ? 'account_id' : undefined;
    if (!column) continue;
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} where ${sql.ref(column)} = ${accountId}`.execute(
      db.kysely,
    );
    snapshot[table] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return snapshot;
}

async function columnsOf(db: Db, table: string): Promise<string[]> {
  const query =
    db.engine === 'postgres'
      ? sql<{
          name: string;
        }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table}`
      : sql<{ name: string }>`select name from pragma_table_info(${table})`;
  return (await query.execute(db.kysely)).rows.map((r) => r.name);
}

test("every keyed and session route answers B like an unknown id for A's resources, and A's rows do not change", async () => {
  const routes = registeredRoutes(t.app).filter((r) => isKeyed(r) || isSession(r));
  assert.ok(routes.length > 30, `the route table was read: ${routes.length} routes`);
  const before = await accountRows(t.db, a.accountId);
  assert.ok(before.contacts?.length && before.campaigns?.length && before.sends?.length, 'A has data to protect');
  const covered: string[] = [];
  for (const route of routes) {
    for (const probe of probesFor(route)) {
      const res = await callAsB(route.method, probe, isSession(route));
      const what = `${route.method} ${probe.url} ${JSON.stringify(probe.payload ?? '')}`;
      try {
        probe.check(res);
      } catch (err) {
        throw new Error(`${what}: ${(err as Error).message}`);
      }
      const text = JSON.stringify(res.body);
      for (const secret of secretsOf(a)) assert.ok(!text.includes(secret), `${what} shows A's ${secret}: ${text}`);
      covered.push(routeKey(route));
    }
  }
  assert.deepEqual(await accountRows(t.db, a.accountId), before, 'no row of A changed');
  // Every route with an id in its path was aimed at A's resource.
  for (const route of routes.filter((r) => r.url.includes('/:'))) assert.ok(covered.includes(routeKey(route)), `${routeKey(route)} probed`);
});

test('a route the test cannot fill fails it, naming the line to add', () => {
  assert.throws(() => probesFor({ method: 'GET', url: '/admin/api/widgets/:id' }), /add 'widgets' to OWNED/);
  assert.throws(() => probesFor({ method: 'POST', url: '/admin/api/widgets' }), /add it to ID_IN_BODY_OR_QUERY .* or WITHOUT_IDS/);
});
