import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { CriteriaInput, GroupInput } from '../../src/contract/admin/segments.js';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { recordEvent } from '../../src/modules/events/events.service.js';
import { previewSegment } from '../../src/modules/segments/segments.service.js';
import { makeAccount, makeField, makeKpi, randomEmail } from '../helpers/factories.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';

/**
 * The SQL of segments against a plain in-memory reading of the rules (docs/admin-api.md,
 * Segments), on random contacts and random criteria: both engines must select exactly the
 * contacts the reference selects. Values come from small sets so that criteria hit, miss and
 * sit on their bounds; events sit half a day off every window edge, so the clock moving
 * between writing and reading never changes the answer.
 */

let t: TestDatabase;
before(async () => {
  t = await openTestDatabase();
});
after(() => t.close());

const DAY = 24 * 60 * 60 * 1000;
const TAGS = ['a', 'b', 'c'];
const TYPES = ['x', 'y'];
const SCORES = [-2, 0, 0.5, 1, 3];
const DATES = ['2025-12-31', '2026-01-01', '2026-06-15'];
const CITIES = ['Paris', 'Lyon'];
const KPIS = [0.5, 1, 2.25];
const METADATA: unknown[] = ['pro', 'free', true, 1, 1.5];
const OPS = ['eq', 'gt', 'gte', 'lt', 'lte', 'between'] as const;

interface Contact {
  tags: string[];
  score?: number;
  renewal?: string;
  city?: string;
  /** Increments written one after the other (the total is their sum). */
  kpi: number[];
  archived: boolean;
  events: { type: string; daysAgo: number; plan?: unknown }[];
}

const contact: fc.Arbitrary<Contact> = fc.record({
  tags: fc.subarray(TAGS),
  score: fc.option(fc.constantFrom(...SCORES), { nil: undefined }),
  renewal: fc.option(fc.constantFrom(...DATES), { nil: undefined }),
  city: fc.option(fc.constantFrom(...CITIES), { nil: undefined }),
  kpi: fc.array(fc.constantFrom(...KPIS), { maxLength: 2 }),
  archived: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  events: fc.array(
    fc.record({
      type: fc.constantFrom(...TYPES),
      daysAgo: fc.integer({ min: 0, max: 9 }).map((d) => d + 0.5),
      plan: fc.option(fc.constantFrom(...METADATA), { nil: undefined }),
    }),
    { maxLength: 3 },
  ),
});

/** `value` and `to` of a comparison, in order for `between`. */
function compared<T extends number | string>(values: readonly T[]) {
  return fc
    .record({ op: fc.constantFrom(...OPS), value: fc.constantFrom(...values), to: fc.constantFrom(...values) })
    .map(({ op, value, to }) => {
      if (op !== 'between') return { op, value };
      return (value as T) <= (to as T) ? { op, value, to } : { op, value: to, to: value };
    });
}

const group: fc.Arbitrary<GroupInput> = fc.record(
  {
    tags: fc.subarray(TAGS, { minLength: 1, maxLength: 2 }),
    events: fc.array(
      fc.record(
        {
          type: fc.constantFrom(...TYPES),
          withinDays: fc.integer({ min: 1, max: 10 }),
          negated: fc.boolean(),
          metadata: fc.record({ key: fc.constant('plan'), value: fc.constantFrom('pro', 'free', 'true', '1', '1.5') }),
        },
        { requiredKeys: ['type', 'withinDays'] },
      ),
      { minLength: 1, maxLength: 2 },
    ),
    fields: fc.array(
      fc.oneof(
        compared(SCORES).map((c) => ({ name: 'Score', ...c })),
        compared(DATES).map((c) => ({ name: 'Renewal', ...c })),
        fc.constantFrom(...CITIES).map((value) => ({ name: 'City', value })),
      ),
      { minLength: 1, maxLength: 2 },
    ),
    kpis: fc.array(
      compared([0, 0.5, 1, 1.5, 2.25, 3.25]).map((c) => ({ id: 'purchases', ...c })),
      { minLength: 1, maxLength: 1 },
    ),
  },
  { requiredKeys: [] },
);

const criteria: fc.Arbitrary<CriteriaInput> = fc.array(group, { minLength: 1, maxLength: 3 }).map((groups) => ({ groups }));

// --- the reference: the rules read straight from the docs ------------------------------------

function holds(op: string, actual: number | string, value: number | string, to?: number | string): boolean {
  switch (op) {
    case 'eq':
      return actual === value;
    case 'gt':
      return actual > value;
    case 'gte':
      return actual >= value;
    case 'lt':
      return actual < value;
    case 'lte':
      return actual <= value;
    default:
      return actual >= value && actual <= to!;
  }
}

/** In micros, as the totals are kept (0.5 + 1 + ... exactly). */
const micros = (n: number) => Math.round(n * 1e6);

function groupHolds(c: Contact, g: GroupInput): boolean {
  if (!(g.tags ?? []).every((tag) => c.tags.includes(tag))) return false;
  for (const f of g.fields ?? []) {
    const actual = f.name === 'Score' ? c.score : f.name === 'Renewal' ? c.renewal : c.city;
    if (actual === undefined || !holds(f.op ?? 'eq', actual, f.value as never, f.to as never)) return false;
  }
  for (const k of g.kpis ?? []) {
    const total = c.kpi.reduce((sum, n) => sum + micros(n), 0);
    if (!holds(k.op, total, micros(k.value as number), k.to === undefined ? undefined : micros(k.to as number))) return false;
  }
  for (const e of g.events ?? []) {
    const found = c.events.some(
      (ev) =>
        ev.type === e.type &&
        ev.daysAgo < e.withinDays &&
        (e.metadata === undefined || (ev.plan !== undefined && String(ev.plan) === e.metadata.value)),
    );
    if (found === Boolean(e.negated)) return false;
  }
  return true;
}

const selects = (c: Contact, input: CriteriaInput) => !c.archived && input.groups!.some((g) => groupHolds(c, g));

// --- the property ------------------------------------------------------------------------------

async function seed(contacts: Contact[]) {
  const { id: accountId } = await makeAccount(t.db);
  await makeField(t.db, accountId, 'Score', 'number');
  await makeField(t.db, accountId, 'Renewal', 'date');
  await makeField(t.db, accountId, 'City', 'location');
  await makeKpi(t.db, accountId, 'purchases');
  const ids: string[] = [];
  for (const c of contacts) {
    const fields = [
      ...(c.score === undefined ? [] : [{ key: 'Score', value: c.score }]),
      ...(c.renewal === undefined ? [] : [{ key: 'Renewal', value: c.renewal }]),
      ...(c.city === undefined ? [] : [{ key: 'City', value: c.city }]),
    ];
    const { id } = await writeContact(t.db, accountId, { email: randomEmail(), name: 'Someone', tags: c.tags, fields });
    for (const increment of c.kpi) await writeContact(t.db, accountId, { id, kpis: { purchases: increment } });
    for (const e of c.events)
      await recordEvent(
        t.db,
        accountId,
        { type: e.type, leadId: id, metadata: e.plan === undefined ? {} : { plan: e.plan } },
        Date.now() - e.daysAgo * DAY,
      );
    if (c.archived) await t.db.kysely.updateTable('contacts').set({ archived: 1 }).where('id', '=', id).execute();
    ids.push(id);
  }
  return { accountId, ids };
}

test('the SQL selects exactly the contacts the in-memory reading of the rules selects', { timeout: 300_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(contact, { minLength: 1, maxLength: 8 }),
      fc.array(criteria, { minLength: 1, maxLength: 8 }),
      async (contacts, list) => {
        const { accountId, ids } = await seed(contacts);
        for (const input of list) {
          const expected = ids.filter((_, i) => selects(contacts[i]!, input)).sort();
          const answer = await previewSegment(t.db, accountId, input);
          assert.deepEqual(answer.items.map((c) => c.id).sort(), expected, JSON.stringify(input));
          assert.equal(answer.count, expected.length, JSON.stringify(input));
        }
      },
    ),
    { numRuns: Number(process.env.SEGMENT_PROPERTY_RUNS ?? 40) },
  );
});
