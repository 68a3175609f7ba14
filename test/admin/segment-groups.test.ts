import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { recordEvent } from '../../src/modules/events/events.service.js';
import { countSegment } from '../../src/modules/segments/segments.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeField, makeKpi, randomEmail } from '../helpers/factories.js';
import { assertError, type Panel, signedIn } from './helpers.js';

/** docs/admin-api.md, Segments: OR groups, negated events, field and KPI comparisons, counts in the list. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const DAY = 24 * 60 * 60 * 1000;
const add = (accountId: string, lead: Parameters<typeof writeContact>[2] = {}) =>
  writeContact(t.db, accountId, { email: randomEmail(), name: 'Someone', ...lead }).then((r) => r.id);
const event = (accountId: string, leadId: string, type: string, daysAgo: number, metadata?: Record<string, unknown>) =>
  recordEvent(t.db, accountId, { type, leadId, metadata }, Date.now() - daysAgo * DAY);

async function matching(panel: Panel, groups: unknown[]): Promise<string[]> {
  const res = await panel.post('/segments/preview', { criteria: { groups } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.count, res.body.items.length);
  return res.body.items.map((c: { id: string }) => c.id).sort();
}
const sorted = (...ids: string[]) => [...ids].sort();

describe('groups', () => {
  test('a contact matches when any group holds; each group is the AND of its conditions', async () => {
    const { panel, accountId } = await signedIn(t);
    const vipBuyer = await add(accountId, { tags: ['vip'] });
    const vipOnly = await add(accountId, { tags: ['vip'] });
    const trial = await add(accountId, { tags: ['trial'] });
    await add(accountId, { tags: ['other'] });
    await event(accountId, vipBuyer, 'purchase', 1);
    const groups = [{ tags: ['vip'], events: [{ type: 'purchase', withinDays: 7 }] }, { tags: ['trial'] }];
    assert.deepEqual(await matching(panel, groups), sorted(vipBuyer, trial));
    assert.ok(!(await matching(panel, groups)).includes(vipOnly));
  });

  test('a contact in several groups is counted once; an empty group selects every listed contact', async () => {
    const { panel, accountId } = await signedIn(t);
    const both = await add(accountId, { tags: ['a', 'b'] });
    const other = await add(accountId);
    assert.deepEqual(await matching(panel, [{ tags: ['a'] }, { tags: ['b'] }]), [both]);
    assert.deepEqual(await matching(panel, [{ tags: ['a'] }, {}]), sorted(both, other));
  });

  test('a field deleted since the criteria were checked matches no contact, in its group only', async () => {
    const { accountId } = await signedIn(t);
    const field = await makeField(t.db, accountId, 'Gone', 'string');
    await add(accountId, { tags: ['x'], fields: [{ key: 'Gone', value: 'a' }] });
    await add(accountId, { tags: ['y'] });
    const gone = { tags: ['x'], fields: [{ name: 'Gone', value: 'a' }] };
    assert.equal(await countSegment(t.db, accountId, { groups: [gone, { tags: ['y'] }] }), 2);
    // The panel refuses to delete a field a segment names; a delete racing a count is what this is.
    await t.db.kysely.deleteFrom('contact_field_values').where('field_id', '=', field.id).execute();
    await t.db.kysely.deleteFrom('custom_fields').where('id', '=', field.id).execute();
    assert.equal(await countSegment(t.db, accountId, { groups: [gone] }), 0);
    assert.equal(await countSegment(t.db, accountId, { groups: [gone, { tags: ['y'] }] }), 1);
    const goneOrNothingDone = { fields: [{ name: 'Gone', value: 'a' }], events: [{ type: 'login', withinDays: 7, negated: true }] };
    assert.equal(await countSegment(t.db, accountId, { groups: [goneOrNothingDone] }), 0, 'a group of exclusions and a deleted field');
  });
});

describe('negated events', () => {
  test('"did not do X within N days": no such event in the window (older ones and other types do not count)', async () => {
    const { panel, accountId } = await signedIn(t);
    const recent = await add(accountId);
    const old = await add(accountId);
    const never = await add(accountId);
    const otherType = await add(accountId);
    await event(accountId, recent, 'login', 2);
    await event(accountId, old, 'login', 40);
    await event(accountId, otherType, 'Login', 1);
    assert.deepEqual(
      await matching(panel, [{ events: [{ type: 'login', withinDays: 30, negated: true }] }]),
      sorted(old, never, otherType),
    );
  });

  test('"did not do X nor Y": a contact with either, or with X several times, is ruled out once', async () => {
    const { panel, accountId } = await signedIn(t);
    const neither = await add(accountId);
    const loggedInTwice = await add(accountId);
    const bought = await add(accountId);
    const both = await add(accountId);
    await event(accountId, loggedInTwice, 'login', 1);
    await event(accountId, loggedInTwice, 'login', 2);
    await event(accountId, bought, 'purchase', 1);
    await event(accountId, both, 'login', 1);
    await event(accountId, both, 'purchase', 1);
    // Neither an archived contact nor another account's contact counts.
    const archived = await add(accountId);
    await t.db.kysely.updateTable('contacts').set({ archived: 1 }).where('id', '=', archived).execute();
    const { accountId: otherAccount } = await signedIn(t);
    await add(otherAccount);
    // matching() checks the count against the contacts listed: each form of count (one set, two) is checked.
    assert.deepEqual(await matching(panel, [{ events: [{ type: 'login', withinDays: 7, negated: true }] }]), sorted(neither, bought));
    const neitherNor = [
      {
        events: [
          { type: 'login', withinDays: 7, negated: true },
          { type: 'purchase', withinDays: 7, negated: true },
        ],
      },
    ];
    assert.deepEqual(await matching(panel, neitherNor), [neither]);
  });

  test('a negated event with metadata: only events with that member value rule a contact out', async () => {
    const { panel, accountId } = await signedIn(t);
    const pro = await add(accountId);
    const free = await add(accountId);
    await event(accountId, pro, 'signup', 1, { plan: 'pro' });
    await event(accountId, free, 'signup', 1, { plan: 'free' });
    const groups = [{ events: [{ type: 'signup', withinDays: 7, negated: true, metadata: { key: 'plan', value: 'pro' } }] }];
    assert.deepEqual(await matching(panel, groups), [free]);
  });

  test('did X and did not do Y in one group', async () => {
    const { panel, accountId } = await signedIn(t);
    const cartOnly = await add(accountId);
    const bought = await add(accountId);
    for (const id of [cartOnly, bought]) await event(accountId, id, 'cart_add', 1);
    await event(accountId, bought, 'purchase', 1);
    const groups = [
      {
        events: [
          { type: 'cart_add', withinDays: 7 },
          { type: 'purchase', withinDays: 7, negated: true },
        ],
      },
    ];
    assert.deepEqual(await matching(panel, groups), [cartOnly]);
  });
});

describe('field comparisons', () => {
  test('Number fields: gt, gte, lt, lte, eq, between (inclusive), compared as numbers; no value never matches', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeField(t.db, accountId, 'Score', 'number');
    const [nine, ten, hundred, noScore] = [
      await add(accountId, { fields: [{ key: 'Score', value: 9 }] }),
      await add(accountId, { fields: [{ key: 'Score', value: '10' }] }),
      await add(accountId, { fields: [{ key: 'Score', value: 100.5 }] }),
      await add(accountId),
    ];
    const where = (op: string, value: unknown, to?: unknown) =>
      matching(panel, [{ fields: [{ name: 'score', op, value, ...(to !== undefined && { to }) }] }]);
    assert.deepEqual(await where('gt', 10), [hundred]);
    assert.deepEqual(await where('gte', '10'), sorted(ten, hundred));
    assert.deepEqual(await where('lt', 10), [nine]);
    assert.deepEqual(await where('lte', 10.0), sorted(nine, ten));
    assert.deepEqual(await where('eq', '10.0'), [ten]);
    assert.deepEqual(await where('between', 9, 10), sorted(nine, ten));
    assert.ok(!(await where('lt', 1000)).includes(noScore));
  });

  test('Date fields compare as dates, either written form', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeField(t.db, accountId, 'Renewal', 'date');
    const january = await add(accountId, { fields: [{ key: 'Renewal', value: '2026-01-31' }] });
    const february = await add(accountId, { fields: [{ key: 'Renewal', value: '01/02/2026' }] });
    const later = await add(accountId, { fields: [{ key: 'Renewal', value: '2027-12-01' }] });
    const where = (op: string, value: unknown, to?: unknown) =>
      matching(panel, [{ fields: [{ name: 'Renewal', op, value, ...(to !== undefined && { to }) }] }]);
    assert.deepEqual(await where('lt', '01/02/2026'), [january]);
    assert.deepEqual(await where('gte', '2026-02-01'), sorted(february, later));
    assert.deepEqual(await where('between', '2026-01-31', '2026-12-31'), sorted(january, february));
    assert.deepEqual(await where('eq', '31/01/2026'), [january]);
    assert.deepEqual(await where('lte', '2027-12-01'), sorted(january, february, later));
  });
});

describe('KPI comparisons', () => {
  test('KPI totals by value: gt, gte, lt, lte, eq, between; no total counts as 0', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeKpi(t.db, accountId, 'purchases');
    const none = await add(accountId);
    const two = await add(accountId, { kpis: { purchases: 2 } });
    const fractional = await add(accountId, { kpis: { purchases: 2.5 } });
    await writeContact(t.db, accountId, { id: two, kpis: { purchases: 0.5 } }); // totals add up: 2.5 too
    const where = (op: string, value: unknown, to?: unknown) =>
      matching(panel, [{ kpis: [{ id: 'purchases', op, value, ...(to !== undefined && { to }) }] }]);
    assert.deepEqual(await where('eq', '2.5'), sorted(two, fractional));
    assert.deepEqual(await where('gt', 2), sorted(two, fractional));
    assert.deepEqual(await where('gte', 2.5), sorted(two, fractional));
    assert.deepEqual(await where('lt', 1), [none]);
    assert.deepEqual(await where('lte', 0), [none]);
    assert.deepEqual(await where('between', 0, 2.4), [none]);
  });
});

describe('validation', () => {
  test('problems are reported at their exact paths, every one at once, and nothing is saved', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeField(t.db, accountId, 'City', 'location');
    await makeField(t.db, accountId, 'Score', 'number');
    await makeKpi(t.db, accountId, 'purchases');
    const body = assertError(
      await panel.post('/segments', {
        name: 'Bad',
        criteria: {
          groups: [
            { tags: ['vip'] },
            {
              fields: [
                { name: 'City', op: 'gt', value: 'Paris' },
                { name: 'Score', op: 'between', value: 5 },
                { name: 'Score', op: 'between', value: 9, to: 5 },
                { name: 'Score', op: 'lt', value: 'ten' },
                { name: 'Score', value: 1, to: 2 },
              ],
              kpis: [
                { id: 'nope', op: 'gt', value: 1 },
                { id: 'purchases', op: 'gt', value: 'many' },
                { id: 'purchases', op: 'lt', value: 1e12 },
              ],
            },
          ],
        },
      }),
      400,
      'Validation Error',
    );
    assert.deepEqual(
      body.details.map((d: { path: string }) => d.path),
      [
        '/criteria/groups/1/fields/0/op',
        '/criteria/groups/1/fields/1/to',
        '/criteria/groups/1/fields/2/to',
        '/criteria/groups/1/fields/3/value',
        '/criteria/groups/1/fields/4/to',
        '/criteria/groups/1/kpis/0/id',
        '/criteria/groups/1/kpis/1/value',
        '/criteria/groups/1/kpis/2/value',
      ],
    );
    assert.deepEqual((await panel.get('/segments')).body.items, []);
  });

  test('schema problems name the member: an unknown operator, no groups, a group member that does not exist', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeKpi(t.db, accountId, 'purchases');
    const preview = (criteria: unknown) => panel.post('/segments/preview', { criteria });
    assertError(
      await preview({ groups: [{ kpis: [{ id: 'purchases', op: 'above', value: 1 }] }] }),
      400,
      'Validation Error',
      '/criteria/groups/0/kpis/0/op',
    );
    assertError(await preview({ groups: [] }), 400, 'Validation Error', '/criteria/groups');
    assertError(await preview({ groups: [{ colour: 'red' }] }), 400, 'Validation Error', '/criteria/groups/0/colour');
    assertError(
      await preview({ groups: [{ events: [{ type: 'x', withinDays: 7, negated: 'yes' }] }] }),
      400,
      'Validation Error',
      '/criteria/groups/0/events/0/negated',
    );
  });

  test('groups and the one-group form cannot be mixed', async () => {
    const { panel } = await signedIn(t);
    assertError(
      await panel.post('/segments/preview', { criteria: { groups: [{}], tags: ['vip'] } }),
      400,
      'Validation Error',
      '/criteria/tags',
    );
  });
});

describe('the segment list', () => {
  test('each segment comes with how many contacts it selects now', async () => {
    const { panel, accountId } = await signedIn(t);
    await add(accountId, { tags: ['vip'] });
    await add(accountId, { tags: ['vip'] });
    const lapsed = await add(accountId);
    await event(accountId, lapsed, 'login', 60);
    await panel.post('/segments', { name: 'VIP', criteria: { groups: [{ tags: ['vip'] }] } });
    await panel.post('/segments', {
      name: 'No login',
      criteria: { groups: [{ events: [{ type: 'login', withinDays: 30, negated: true }] }] },
    });
    const items = (await panel.get('/segments')).body.items;
    assert.deepEqual(
      items.map((s: { name: string; count: number }) => [s.name, s.count]),
      [
        ['VIP', 2],
        ['No login', 3],
      ],
    );
  });
});

test('a count is kept for a minute, but an edited segment is counted again at once', async () => {
  const { panel, accountId } = await signedIn(t);
  await add(accountId, { tags: ['vip'] });
  const segment = (await panel.post('/segments', { name: 'VIP', criteria: { groups: [{ tags: ['vip'] }] } })).body;
  const count = async () => (await panel.get('/segments')).body.items[0].count;
  assert.equal(await count(), 1);
  await add(accountId, { tags: ['vip'] });
  assert.equal(await count(), 1, 'the count of a minute ago');
  await panel.put(`/segments/${segment.id}`, { name: 'VIP', criteria: { groups: [{ tags: ['vip'] }, { tags: ['none'] }] } });
  assert.equal(await count(), 2);
});

test('a KPI compared by a saved segment cannot be deleted (409 naming the segment) until the segment no longer compares it', async () => {
  const { panel, accountId } = await signedIn(t);
  await makeKpi(t.db, accountId, 'purchases');
  const segment = (
    await panel.post('/segments', {
      name: 'Repeat buyers',
      criteria: { groups: [{}, { kpis: [{ id: 'purchases', op: 'gte', value: 2 }] }] },
    })
  ).body;
  const refused = assertError(
    await panel.del('/kpis/purchases'),
    409,
    "KPI 'purchases' is used by segment 'Repeat buyers': edit or delete it first",
  );
  assert.equal(refused.code, 'CONFLICT');
  assert.equal((await panel.get('/kpis')).body.items.length, 1);
  await panel.put(`/segments/${segment.id}`, { name: 'Repeat buyers', criteria: { groups: [{}] } });
  assert.equal((await panel.del('/kpis/purchases')).status, 204);
});

describe('tenant isolation', () => {
  test("another account's contacts, events, fields and KPIs never count, whatever the operator", async () => {
    const a = await signedIn(t);
    const b = await signedIn(t);
    await makeField(t.db, a.accountId, 'Score', 'number');
    await makeKpi(t.db, a.accountId, 'purchases');
    await makeField(t.db, b.accountId, 'Score', 'number');
    await makeKpi(t.db, b.accountId, 'purchases');
    const theirs = await add(a.accountId, { tags: ['vip'], fields: [{ key: 'Score', value: 50 }], kpis: { purchases: 5 } });
    await event(a.accountId, theirs, 'purchase', 1);
    const mine = await add(b.accountId);
    const groups = [
      { fields: [{ name: 'Score', op: 'gt', value: 1 }] },
      { kpis: [{ id: 'purchases', op: 'gt', value: 1 }] },
      { events: [{ type: 'purchase', withinDays: 7 }] },
      { tags: ['vip'] },
    ];
    assert.deepEqual(await matching(b.panel, groups), []);
    // Not having done something is judged on this account's events only.
    assert.deepEqual(await matching(b.panel, [{ events: [{ type: 'purchase', withinDays: 7, negated: true }] }]), [mine]);
  });

  test('a KPI or field defined only in another account is unknown here', async () => {
    const a = await signedIn(t);
    const b = await signedIn(t);
    await makeKpi(t.db, a.accountId, 'secret_kpi');
    await makeField(t.db, a.accountId, 'Secret', 'number');
    const res = await b.panel.post('/segments/preview', {
      criteria: { groups: [{ kpis: [{ id: 'secret_kpi', op: 'gt', value: 1 }], fields: [{ name: 'Secret', op: 'gt', value: 1 }] }] },
    });
    const body = assertError(res, 400, 'Validation Error');
    assert.deepEqual(body.details.map((d: { path: string }) => d.path).sort(), [
      '/criteria/groups/0/fields/0/name',
      '/criteria/groups/0/kpis/0/id',
    ]);
  });
});
