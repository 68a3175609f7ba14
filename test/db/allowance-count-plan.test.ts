import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { inTransaction } from '../../src/db/transaction.js';
import { COUNTED_SENDS } from '../../src/modules/sends/sends.repo.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * The allowance's count (a trigger's read, the account page) reads the partial index of the
 * counted sends (migration 0023), whose predicate is COUNTED_SENDS as written: so it reads at most
 * the sends the allowance let through, never the month's rejected, opted-out or test sends.
 * With the statuses as bound values, or written otherwise, SQLite could not match the index's
 * terms and PostgreSQL could not prove its predicate, and both would read another index.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

/** COUNTED_SENDS as SQL text: all literals, no bound value (a partial index can match no parameter). */
function countedText(): string {
  const { sql: text, parameters } = COUNTED_SENDS.compile(t.db.kysely);
  assert.deepEqual(parameters, [], text);
  return text;
}

test("the allowance's count reads the index of counted sends", async () => {
  let plan: string;
  if (t.db.engine === 'sqlite') {
    // SQLite plans by fixed rules, without statistics: the plan of an empty table is a full one's.
    const count = sql.raw(`select count(*) from sends where account_id = 'acc_plan' and created_at >= 0 and ${countedText()}`);
    const { rows } = await sql<{ detail: string }>`explain query plan ${count}`.execute(t.db.kysely);
    plan = rows.map((r) => r.detail).join('; ');
  } else {
    // The generic plan a prepared statement keeps (it knows no bound value) must be able to use
    // the partial index: its predicate proved from the query's own text. An empty, never analysed
    // table makes a scan look as cheap as any index, hence no sequential scans here.
    plan = await inTransaction(t.db, async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      await sql`set local plan_cache_mode = force_generic_plan`.execute(tx);
      await sql
        .raw(`prepare allowance_count (text, bigint) as
          select count(*) from sends where account_id = $1 and created_at >= $2 and ${countedText()}`)
        .execute(tx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`explain execute allowance_count ('acc_plan', 0)`.execute(tx);
      await sql`deallocate allowance_count`.execute(tx);
      return rows.map((r) => r['QUERY PLAN']).join('; ');
    });
  }
  assert.match(plan, /sends_counted/, plan);
});
