import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/ids.js';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { recordEvent } from '../../src/modules/events/events.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeField, randomEmail } from '../helpers/factories.js';
import { assertError, signedIn } from './helpers.js';

/** docs/admin-api.md, Segments: criteria (event type + window + metadata, tags, fields), CRUD, preview, contacts. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const DAY = 24 * 60 * 60 * 1000;
const add = (accountId: string, lead: Parameters<typeof writeContact>[2]) =>
  writeContact(t.db, accountId, { email: randomEmail(), name: 'Someone', ...lead }).then((r) => r.id);
const event = (accountId: string, leadId: string, type: string, daysAgo: number, metadata?: Record<string, unknown>) =>
  recordEvent(t.db, accountId, { type, leadId, metadata }, Date.now() - daysAgo * DAY);
const ids = (body: { items: { id: string }[] }) => body.items.map((c) => c.id).sort();

async function preview(p: Awaited<ReturnType<typeof signedIn>>['panel'], criteria: unknown) {
  const res = await p.post('/segments/preview', { criteria });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { count: number; items: { id: string }[] };
}

describe('criteria', () => {
  test('event type within N days: exact type (case included), inside the window only, each contact once', async () => {
    const { panel, accountId } = await signedIn(t);
    const recent = await add(accountId, {});
    const twice = await add(accountId, {});
    const old = await add(accountId, {});
    const otherCase = await add(accountId, {});
    await event(accountId, recent, 'purchase', 1);
    await event(accountId, twice, 'purchase', 2);
    await event(accountId, twice, 'purchase', 3);
    await event(accountId, old, 'purchase', 10);
    await event(accountId, otherCase, 'Purchase', 1);
    const body = await preview(panel, { event: { type: 'purchase', withinDays: 7 } });
    assert.equal(body.count, 2);
    assert.deepEqual(ids(body), [recent, twice].sort());
    assert.equal((await preview(panel, { event: { type: 'purchase', withinDays: 30 } })).count, 3);
  });

  test('event metadata key = value, compared as text (strings, numbers, booleans)', async () => {
    const { panel, accountId } = await signedIn(t);
    const pro = await add(accountId, {});
    const free = await add(accountId, {});
    const numeric = await add(accountId, {});
    const flagged = await add(accountId, {});
    const none = await add(accountId, {});
    await event(accountId, pro, 'signup', 1, { plan: 'pro' });
    await event(accountId, free, 'signup', 1, { plan: 'free' });
    await event(accountId, numeric, 'signup', 1, { plan: 12.5 });
    await event(accountId, flagged, 'signup', 1, { 'trial.used': true });
    await event(accountId, none, 'signup', 1);
    assert.deepEqual(ids(await preview(panel, { event: { type: 'signup', withinDays: 7, metadata: { key: 'plan', value: 'pro' } } })), [
      pro,
    ]);
    assert.deepEqual(ids(await preview(panel, { event: { type: 'signup', withinDays: 7, metadata: { key: 'plan', value: '12.5' } } })), [
      numeric,
    ]);
    assert.deepEqual(
      ids(await preview(panel, { event: { type: 'signup', withinDays: 7, metadata: { key: 'trial.used', value: 'true' } } })),
      [flagged],
    );
    assert.equal((await preview(panel, { event: { type: 'signup', withinDays: 7, metadata: { key: 'plan', value: 'PRO' } } })).count, 0);
  });

  test('metadata as text on both engines: a boolean is "true", never "1"; a number is its JSON text; a string "true" is "true"', async () => {
    const { panel, accountId } = await signedIn(t);
    const bool = await add(accountId, {});
    const one = await add(accountId, {});
    const text = await add(accountId, {});
    await event(accountId, bool, 'flag', 1, { v: true });
    await event(accountId, one, 'flag', 1, { v: 1 });
    await event(accountId, text, 'flag', 1, { v: 'true' });
    const match = async (value: string) =>
      ids(await preview(panel, { event: { type: 'flag', withinDays: 7, metadata: { key: 'v', value } } }));
    assert.deepEqual(await match('true'), [bool, text].sort());
    assert.deepEqual(await match('1'), [one]);
    assert.deepEqual(await match('false'), []);
  });

  test('tags: every tag given must be on the contact, compared in stored form', async () => {
    const { panel, accountId } = await signedIn(t);
    const both = await add(accountId, { tags: ['VIP', 'Black Friday'] });
    await add(accountId, { tags: ['vip'] });
    const body = await preview(panel, { tags: ['vip', 'Black Friday'] });
    assert.deepEqual(ids(body), [both]);
  });

  test('fields: value read with the field type rules (Number "12.50" finds 12.5; a location as written)', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeField(t.db, accountId, 'Score', 'number');
    await makeField(t.db, accountId, 'City', 'location');
    const a = await add(accountId, {
      fields: [
        { key: 'score', value: 12.5 },
        { key: 'City', value: 'Paris' },
      ],
    });
    await add(accountId, {
      fields: [
        { key: 'score', value: 12.5 },
        { key: 'City', value: 'Lyon' },
      ],
    });
    await add(accountId, {
      fields: [
        { key: 'score', value: 3 },
        { key: 'City', value: 'Paris' },
      ],
    });
    assert.deepEqual(
      ids(
        await preview(panel, {
          fields: [
            { name: 'Score', value: '12.50' },
            { name: 'city', value: 'Paris' },
          ],
        }),
      ),
      [a],
    );
  });

  test('all parts must hold together; archived contacts are never in a segment', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeField(t.db, accountId, 'City', 'location');
    const match = await add(accountId, { tags: ['vip'], fields: [{ key: 'City', value: 'Paris' }] });
    const noTag = await add(accountId, { fields: [{ key: 'City', value: 'Paris' }] });
    const archived = await add(accountId, { tags: ['vip'], fields: [{ key: 'City', value: 'Paris' }] });
    for (const id of [match, noTag, archived]) await event(accountId, id, 'visit', 1, { page: 'pricing' });
    await panel.patch(`/contacts/${archived}`, { archived: true });
    const body = await preview(panel, {
      event: { type: 'visit', withinDays: 90, metadata: { key: 'page', value: 'pricing' } },
      tags: ['vip'],
      fields: [{ name: 'City', value: 'Paris' }],
    });
    assert.deepEqual(ids(body), [match]);
  });

  test('withinDays: 90 is accepted, 91 and 0 are refused (400 naming the member)', async () => {
    const { panel, accountId } = await signedIn(t);
    const id = await add(accountId, {});
    await event(accountId, id, 'visit', 89);
    assert.equal((await preview(panel, { event: { type: 'visit', withinDays: 90 } })).count, 1);
    assertError(
      await panel.post('/segments/preview', { criteria: { event: { type: 'visit', withinDays: 91 } } }),
      400,
      'Validation Error',
      '/criteria/event/withinDays',
    );
    assertError(
      await panel.post('/segments/preview', { criteria: { event: { type: 'visit', withinDays: 0 } } }),
      400,
      'Validation Error',
      '/criteria/event/withinDays',
    );
    assertError(
      await panel.post('/segments', { name: 'x', criteria: { event: { type: 'visit', withinDays: 91 } } }),
      400,
      'Validation Error',
      '/criteria/event/withinDays',
    );
  });

  test('criteria validation: unknown field, a value of the wrong format, a missing type, unknown members', async () => {
    const { panel, accountId } = await signedIn(t);
    await makeField(t.db, accountId, 'Score', 'number');
    assertError(
      await panel.post('/segments/preview', { criteria: { fields: [{ name: 'Nope', value: 'x' }] } }),
      400,
      'Validation Error',
      '/criteria/fields/0/name',
    );
    assertError(
      await panel.post('/segments/preview', { criteria: { fields: [{ name: 'Score', value: 'twelve' }] } }),
      400,
      'Validation Error',
      '/criteria/fields/0/value',
    );
    assertError(
      await panel.post('/segments/preview', { criteria: { fields: [{ name: 'Score', value: '' }] } }),
      400,
      'Validation Error',
      '/criteria/fields/0/value',
    );
    assertError(
      await panel.post('/segments/preview', { criteria: { event: { withinDays: 7 } } }),
      400,
      'Validation Error',
      '/criteria/event/type',
    );
    assertError(await panel.post('/segments/preview', { criteria: { tags: 'vip' } }), 400, 'Validation Error', '/criteria/tags');
    assertError(await panel.post('/segments/preview', { criteria: { colour: 'red' } }), 400, 'Validation Error', '/criteria/colour');
  });
});

describe('saved segments', () => {
  test('create, list, replace, delete', async () => {
    const { panel } = await signedIn(t);
    const created = await panel.post('/segments', {
      name: ' Buyers ',
      criteria: { event: { type: 'purchase', withinDays: 30 }, tags: ['Black Friday'] },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.match(created.body.id, /^seg_/);
    assert.equal(created.body.name, 'Buyers');
    // The one-group form is saved as one group.
    assert.deepEqual(created.body.criteria, { groups: [{ events: [{ type: 'purchase', withinDays: 30 }], tags: ['black-friday'] }] });
    assert.match(created.body.createdAt, /Z$/);
    const [listed] = (await panel.get('/segments')).body.items;
    assert.deepEqual(listed, { ...created.body, count: 0, countedAt: listed.countedAt });
    assert.match(listed.countedAt, /Z$/);

    const replaced = await panel.put(`/segments/${created.body.id}`, { name: 'Taggers', criteria: { groups: [{ tags: ['vip'] }] } });
    assert.equal(replaced.status, 200);
    assert.deepEqual(
      [replaced.body.id, replaced.body.name, replaced.body.criteria],
      [created.body.id, 'Taggers', { groups: [{ tags: ['vip'] }] }],
    );

    assert.equal((await panel.del(`/segments/${created.body.id}`)).status, 204);
    assert.deepEqual((await panel.get('/segments')).body.items, []);
    assertError(await panel.del(`/segments/${created.body.id}`), 404, 'Segment not found');
    assertError(await panel.put(`/segments/${newId('seg')}`, { name: 'x', criteria: {} }), 404, 'Segment not found');
  });

  test('name validation', async () => {
    const { panel } = await signedIn(t);
    assertError(await panel.post('/segments', { name: '  ', criteria: {} }), 400, 'Validation Error', '/name');
    assertError(await panel.post('/segments', { criteria: {} }), 400, 'Validation Error', '/name');
    assertError(await panel.post('/segments', { name: 'x' }), 400, 'Validation Error', '/criteria');
  });

  test('contacts of a saved segment: count, and keyset pages newest first', async () => {
    const { panel, accountId } = await signedIn(t);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await add(accountId, { tags: ['member'] }));
    await add(accountId, {});
    const segment = (await panel.post('/segments', { name: 'Members', criteria: { tags: ['member'] } })).body;
    const first = await panel.get(`/segments/${segment.id}/contacts?limit=2`);
    assert.equal(first.status, 200);
    assert.equal(first.body.count, 5);
    const second = await panel.get(`/segments/${segment.id}/contacts?limit=2&cursor=${first.body.nextCursor}`);
    const third = await panel.get(`/segments/${segment.id}/contacts?limit=2&cursor=${second.body.nextCursor}`);
    assert.deepEqual(
      [...first.body.items, ...second.body.items, ...third.body.items].map((c: { id: string }) => c.id),
      [...made].reverse(),
    );
    assert.equal(third.body.nextCursor, null);
    assert.deepEqual(Object.keys(first.body.items[0]).sort(), [
      'archived',
      'createdAt',
      'email',
      'id',
      'name',
      'optedOut',
      'phone',
      'tags',
    ]);
    assertError(await panel.get(`/segments/${newId('seg')}/contacts`), 404, 'Segment not found');
  });

  test('a saved segment is evaluated when read: new matching contacts appear', async () => {
    const { panel, accountId } = await signedIn(t);
    const segment = (await panel.post('/segments', { name: 'Later', criteria: { event: { type: 'late', withinDays: 1 } } })).body;
    assert.equal((await panel.get(`/segments/${segment.id}/contacts`)).body.count, 0);
    await event(accountId, await add(accountId, {}), 'late', 0);
    assert.equal((await panel.get(`/segments/${segment.id}/contacts`)).body.count, 1);
  });
});
