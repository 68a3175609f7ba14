import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import type { Criteria } from '../../src/modules/segments/segment-criteria.js';
import { segmentCountQuery } from '../../src/modules/segments/segment-criteria.repo.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * SQLite counts a segment as sets of ids looked up by primary key where it can, and contact by
 * contact otherwise (segment-criteria.repo.ts, sqliteSetCount; docs/decisions.md, Segments). The
 * answers are the same either way (segments-property.test.ts); these plans pin which way each
 * kind of criteria goes, since a wrong turn would cost only time. SQLite plans by fixed rules,
 * without statistics, so an empty test database shows the plan of a full one.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const skip = process.env.DATABASE_URL ? 'SQLite only: PostgreSQL counts contact by contact, with hash joins' : false;
const NO_DEFINITIONS = { fields: new Map(), kpis: new Set<string>() };

async function planOf(criteria: Criteria): Promise<string> {
  const query = segmentCountQuery('sqlite', 'acc_x', criteria, NO_DEFINITIONS, Date.now()).compile(t.db.kysely);
  const raw = sql.raw(query.sql.replace(/\?/g, () => 'null'));
  const { rows } = await sql<{ detail: string }>`explain query plan ${raw}`.execute(t.db.kysely);
  return rows.map((r) => r.detail).join('; ');
}

const byKey = /SEARCH c USING INDEX sqlite_autoindex_contacts_1 \(id=\?\)/;
const negated = { type: 'login', withinDays: 7, negated: true };

test('groups that each have a set to start from: their union, each id looked up by key', { skip }, async () => {
  const plan = await planOf({ groups: [{ tags: ['a'], events: [negated] }, { events: [{ type: 'purchase', withinDays: 7 }] }] });
  assert.match(plan, byKey, plan);
  assert.match(plan, /UNION/, plan);
  assert.match(plan, /EXCEPT/, plan);
  assert.doesNotMatch(plan, /contacts_list/, plan);
});

test('one group of exclusions only: the listed contacts, less the excluded ids looked up by key', { skip }, async () => {
  const plan = await planOf({ groups: [{ events: [negated, { type: 'purchase', withinDays: 7, negated: true }] }] });
  assert.match(plan, byKey, plan);
  assert.match(plan, /COVERING INDEX contacts_list/, plan);
});

test('a group without a set beside another group: contact by contact', { skip }, async () => {
  const plan = await planOf({ groups: [{ tags: ['a'] }, { events: [negated] }] });
  assert.doesNotMatch(plan, byKey, plan);
  assert.match(plan, /contacts_list/, plan);
});
