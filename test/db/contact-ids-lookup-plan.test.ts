import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { sendsByIdsQuery } from '../../src/modules/activity/activity.repo.js';
import { contactsByIdsQuery } from '../../src/modules/contacts/contacts.repo.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * The events batch names its contacts by id in one IN list (findContactIdsByIds): the look-up
 * must read the primary key, one probe per id, not the account's contacts. SQLite plans without
 * statistics, and with `account_id = ?` beside the IN list it chose contacts_list (account_id)
 * and read every contact of the account (docs/performance.md, sixth session: batchsqlite).
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

async function plan(query: CompiledQuery): Promise<string> {
  const raw = sql.raw(query.sql.replace(/\$\d+|\?/g, () => 'null'));
  const { rows } = await sql<{ detail: string }>`explain query plan ${raw}`.execute(t.db.kysely);
  return rows.map((r) => r.detail).join('; ');
}

/**
 * SQLite plans by fixed rules, without statistics (Herald never runs ANALYZE on it): the plan
 * of an empty test database is the plan of a full one. PostgreSQL plans from statistics, and on
 * an empty, never analysed table any index looks as cheap as the primary key, so its plan here
 * says nothing (with data it probes contacts_pkey / sends_pkey: docs/performance.md, batchsqlite).
 */
const skip = process.env.DATABASE_URL ? 'PostgreSQL plans from statistics an empty test table does not have' : false;

test("a batch's contact look-up by ids reads the primary key, not the account's contacts", { skip }, async () => {
  const ids = Array.from({ length: 100 }, (_, i) => `ld_${i}`);
  const text = await plan(contactsByIdsQuery(t.db.kysely, ids).compile());
  assert.doesNotMatch(text, /contacts_list|SCAN/, text);
  assert.match(text, /sqlite_autoindex_contacts_1 \(id=\?\)/, text);
});

test("an activity page's test-send look-up by send ids reads the primary key, not the account's sends", { skip }, async () => {
  const ids = Array.from({ length: 50 }, (_, i) => `snd_${i}`);
  const text = await plan(sendsByIdsQuery(t.db.kysely, ids).compile());
  assert.doesNotMatch(text, /sends_counted|SCAN/, text);
  assert.match(text, /sqlite_autoindex_sends_1 \(id=\?\)/, text);
});
