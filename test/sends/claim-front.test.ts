import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { claimBatch } from '../../src/dispatcher/dispatch-claim.js';
import { insertSend, makeEmailCampaign, makeTenant } from '../helpers/factories.js';
import { startService, type TestService } from '../helpers/harness.js';
import { rowsRead } from '../helpers/rows-read.js';

/**
 * A claim looks at the front of the queue and no further (dispatch.repo.ts, queueFront): per
 * waiting status, its limit of the sends that wake first. It re-arms those a restart moved
 * later and claims the due ones among them, so a backlog of any size costs each claim the
 * same. Before, each claim re-armed every woken send it could find, stepping over every due
 * send of the backlog to find them (13 ms a claim on SQLite with 20,000 due).
 * A database of its own and no dispatcher: every send in the queue is this file's.
 */
let t: TestService;
before(async () => {
  t = await startService({ role: 'api', ownDatabase: true });
});
after(() => t.close());

const LIMIT = 2;

/** Pending sends whose wake and due times are given (a restart moved the due time of the first kind later). */
async function pendingSends(accountId: string, campaignId: string, times: { wake: number; due: number }[]): Promise<string[]> {
  const ids: string[] = [];
  for (const { wake, due } of times) {
    ids.push((await insertSend(t.db, accountId, campaignId, { status: 'pending', at: due, wakeAt: wake })).id);
  }
  return ids;
}

const rearmedOf = async (ids: string[]) => {
  const rows = await t.db.kysely.selectFrom('sends').select(['id', 'wake_at', 'due_at']).where('id', 'in', ids).execute();
  return rows.filter((r) => Number(r.wake_at) === Number(r.due_at)).map((r) => r.id);
};

test('restarted sends at the front are re-armed a claim limit at a time; the due sends behind them are claimed after', async () => {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 600 });
  const now = Date.now();
  // Five sends woke a minute ago but are due in an hour; three due ones wake after them.
  const woken = await pendingSends(
    tenant.accountId,
    campaignId,
    Array.from({ length: 5 }, (_, i) => ({ wake: now - 60_000 + i, due: now + 3_600_000 })),
  );
  const due = await pendingSends(
    tenant.accountId,
    campaignId,
    Array.from({ length: 3 }, (_, i) => ({ wake: now - 30_000 + i, due: now - 30_000 + i })),
  );

  const first = await claimBatch(t.db, now, 60_000, LIMIT);
  assert.deepEqual(first.sends, [], 'the front held only sends not yet due');
  assert.deepEqual((await rearmedOf(woken)).sort(), woken.slice(0, LIMIT).sort(), 'the front, and only it, re-armed');

  const claimed: string[] = [];
  for (let i = 0; i < 6 && claimed.length < due.length; i++) {
    const { sends } = await claimBatch(t.db, now, 60_000, LIMIT);
    claimed.push(...sends.map((s) => s.id));
  }
  assert.deepEqual(claimed, due, 'every due send claimed, in due order');
  assert.deepEqual((await rearmedOf(woken)).sort(), [...woken].sort(), 'each woken send re-armed on reaching the front');
  assert.deepEqual((await claimBatch(t.db, now, 60_000, LIMIT)).sends, [], 'nothing woken is claimed before its due time');
});

test('PostgreSQL: a claim reads a few times its limit of sends, whatever the backlog of due sends', async (c) => {
  if (!process.env.DATABASE_URL) return c.skip('PostgreSQL only (read from the table statistics)');
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const now = Date.now();
  const backlog = 400;
  const due = now - 60_000;
  // The backlog among many sent sends, as in a table in use: the planner then reads by index.
  const insert = (prefix: string, status: string, count: number) =>
    sql`insert into sends (id, account_id, campaign_id, contact_id, status, channel, due_at, wake_at, attempts, created_at, updated_at)
      select ${prefix} || n, ${tenant.accountId}, ${campaignId}, 'ld_' || ${prefix} || n, ${status}, 'email',
             cast(${due} as bigint), cast(${due} as bigint), 0, cast(${now} as bigint), cast(${now} as bigint)
        from generate_series(1, ${sql.lit(count)}) n`.execute(t.db.kysely);
  await insert('snd_sent_', 'sent', 20_000);
  await insert('snd_backlog_', 'queued', backlog);
  const read = await rowsRead(t.config, 'sends', async (db) => {
    assert.equal((await claimBatch(db, now, 60_000, LIMIT)).sends.length, LIMIT);
  });
  // Each kind's front and the expired leases (at most LIMIT rows each), the claimed rows again
  // (their update, their receipts): a few times the limit (9 rows measured), not the backlog.
  assert.ok(read <= 10 * LIMIT, `${read} rows of sends read by one claim with ${backlog} due`);
});
