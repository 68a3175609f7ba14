import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { listActivity } from '../../src/modules/activity/activity.service.js';
import { contactTenant, useTestApp } from '../contacts/helpers.js';
import { assertMissingScope } from '../helpers/app.js';
import { randomEmail, uniq } from '../helpers/factories.js';

/**
 * POST /api/events/batch (decisions.md, Batch writes): every item exactly as POST /api/events
 * would answer it, in order; a failed item writes no event and never fails the others.
 */
const app = useTestApp();

/** A tenant whose key has these scopes. */
async function tenant(options: { scopes?: string[] } = {}) {
  const t = await contactTenant(app(), options);
  return { ...t, batch: (items: unknown) => t.api.post('/api/events/batch', { items }) };
}

/** A tenant with one contact (and a visitor id linked to it). */
async function tenantWithContact() {
  const t = await contactTenant(app());
  const tracker = uniq('visitor-');
  const lead = await t.lead({ email: randomEmail(), name: 'Ada Lovelace', tracker });
  assert.equal(lead.status, 200);
  return { ...t, tracker, leadId: lead.body.id as string, batch: (items: unknown) => t.api.post('/api/events/batch', { items }) };
}

const eventsOf = async (accountId: string, leadId: string) =>
  (await listActivity(app().db, accountId, leadId)).items.filter((i) => i.kind === 'event');

describe('POST /api/events/batch', () => {
  test('results come in order, each with the status and body of its single call; failed items write nothing', async () => {
    const t = await tenantWithContact();
    const items = [
      { type: 'purchase', leadId: t.leadId, value: 49.9, metadata: { plan: 'gold' }, url: 'https://acme.test/buy?x=1' },
      { type: 'page_view', tracker: t.tracker },
      { type: 'visit' },
      { type: 'visit', leadId: 'ld_doesnotexist' },
      { type: 'click', leadId: t.leadId },
      { leadId: t.leadId },
      { type: 'visit', leadId: t.leadId, colour: 'red' },
      { type: 'visit\u0000', leadId: t.leadId },
      { type: 'signup', leadId: t.leadId, value: true },
    ];
    const res = await t.batch(items);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.results.length, items.length);
    for (const [i, item] of items.entries()) {
      const alone = await t.api.post('/api/events', item);
      const result = res.body.results[i];
      assert.equal(result.status, alone.status, `item ${i}: ${JSON.stringify(result.body)}`);
      if (alone.status === 200) {
        assert.deepEqual(Object.keys(result.body).sort(), ['createdAt', 'id', 'leadId', 'type']);
        assert.deepEqual({ ...result.body, id: 0, createdAt: 0 }, { ...alone.body, id: 0, createdAt: 0 }, `item ${i}`);
      } else {
        assert.deepEqual(result.body, alone.body, `item ${i}`);
      }
    }
    assert.deepEqual(
      res.body.results.map((r: { status: number }) => r.status),
      [200, 200, 400, 404, 400, 400, 400, 400, 200],
    );
    assert.deepEqual(res.body.results[2].body, {
      statusCode: 400,
      error: 'Bad Request',
      code: 'LEAD_OR_TRACKER_REQUIRED',
      message: 'leadId or tracker is required',
    });
    assert.deepEqual(res.body.results[3].body, { statusCode: 404, error: 'Not Found', code: 'LEAD_NOT_FOUND', message: 'Lead not found' });
    assert.deepEqual(res.body.results[4].body.details, [{ path: '/value', message: 'value is required when type is click' }]);
    assert.deepEqual(res.body.results[5].body.details, [{ path: '/type', message: 'is required' }]);
    assert.deepEqual(res.body.results[6].body.details, [{ path: '/colour', message: 'is not an accepted member' }]);
    assert.deepEqual(res.body.results[7].body.details, [{ path: '/type', message: 'must not contain the NUL character (U+0000)' }]);

    // The batch wrote exactly its three good items (the single calls wrote theirs after them).
    const batchIds = new Set(
      res.body.results.filter((r: { status: number }) => r.status === 200).map((r: { body: { id: string } }) => r.body.id),
    );
    const stored = (await eventsOf(t.accountId, t.leadId)).filter((e) => batchIds.has(e.id));
    assert.equal(stored.length, 3);
    const purchase = stored.find((e) => e.id === res.body.results[0].body.id);
    assert.deepEqual(purchase, {
      kind: 'event',
      at: res.body.results[0].body.createdAt,
      id: res.body.results[0].body.id,
      type: 'purchase',
      value: '49.9',
      metadata: { plan: 'gold' },
      url: 'acme.test/buy',
    });
  });

  test("another account's leadId or tracker is 404 Lead not found per item, and writes nothing there", async () => {
    const owner = await tenantWithContact();
    const other = await tenantWithContact();
    const before = await eventsOf(owner.accountId, owner.leadId);
    const res = await other.batch([
      { type: 'visit', leadId: owner.leadId },
      { type: 'visit', tracker: owner.tracker },
      { type: 'visit', leadId: other.leadId },
    ]);
    assert.deepEqual(
      res.body.results.map((r: { status: number; body: { message?: string } }) => [r.status, r.body.message]),
      [
        [404, 'Lead not found'],
        [404, 'Lead not found'],
        [200, undefined],
      ],
    );
    assert.deepEqual(await eventsOf(owner.accountId, owner.leadId), before);
  });

  test('a key without events:write is refused as a whole (403); empty or over 1000 items answer 400', async () => {
    const t = await tenant({ scopes: ['leads:write'] });
    const refused = await t.batch([{ type: 'visit', leadId: 'ld_x' }]);
    assertMissingScope(refused, 'events:write');

    const c = await tenantWithContact();
    for (const items of [[], Array.from({ length: 1001 }, () => ({ type: 'visit', leadId: c.leadId }))]) {
      const res = await c.batch(items);
      assert.deepEqual(res.body, {
        statusCode: 400,
        error: 'Bad Request',
        code: 'VALIDATION_ERROR',
        message: 'Validation Error',
        details: [{ path: '/items', message: 'must be a list of 1 to 1000 items' }],
      });
    }
    assert.deepEqual(await eventsOf(c.accountId, c.leadId), []);
  });

  test('1000 events in one batch are all written, in order', async () => {
    const t = await tenantWithContact();
    const res = await t.batch(Array.from({ length: 1000 }, (_, i) => ({ type: `step-${i}`, leadId: t.leadId })));
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.results.map((r: { body: { type: string } }) => r.body.type),
      Array.from({ length: 1000 }, (_, i) => `step-${i}`),
    );
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from events where account_id = ${t.accountId}`.execute(
      app().db.kysely,
    );
    assert.equal(Number(rows[0]?.n), 1000);
  });
});
