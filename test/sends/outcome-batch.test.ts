import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import type { ClaimedSend } from '../../src/dispatcher/dispatch.repo.js';
import { OutcomeBatch } from '../../src/dispatcher/outcome-batch.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, uniq } from '../helpers/factories.js';
import { makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * Outcomes of sends delivered close together share one write (outcome-batch.ts), and each is
 * still fenced by its own claim. The process serves the API only: no dispatcher claims behind
 * the test's back.
 */
let t: TestHerald;
before(async () => {
  t = await startTestHerald({}, { role: 'api' });
});
after(() => t.close());

/** Queues `count` sends and claims them as a worker would (status sending, attempt 1), only these. */
async function claimedSends(count: number): Promise<ClaimedSend[]> {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const api = apiClient(t.app, tenant.key);
  const mine: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: `${uniq('batch')}@example.com`, name: 'Batch Test' } });
    assert.equal(r.body.status, 'queued', JSON.stringify(r.body));
    mine.push(r.body.sendId);
  }
  // Only these: other test files on a shared database may have due sends of their own, which
  // this test must not take.
  await t.db.kysely
    .updateTable('sends')
    .set({ status: 'sending', attempts: 1, lease_until: Date.now() + 60_000 })
    .where('id', 'in', mine)
    .execute();
  const rows = await t.db.kysely.selectFrom('sends').selectAll().where('id', 'in', mine).orderBy('id').execute();
  assert.equal(rows.length, count);
  return rows.map((r) => ({
    id: r.id,
    account_id: r.account_id,
    campaign_id: r.campaign_id,
    contact_id: r.contact_id,
    channel: r.channel,
    attempts: 1,
    due_at: Number(r.due_at),
    test: false,
    triggerData: null,
  }));
}

test('outcomes written together: each recorded with its own values, a taken-over claim left alone', async () => {
  const claimed = await claimedSends(6);
  const mine = claimed.map((send) => send.id);
  const [lost, ...ours] = claimed;
  // Another worker took `lost` over meanwhile (its claim bumped the attempt).
  await t.db.kysely
    .updateTable('sends')
    .set({ attempts: lost!.attempts + 1 })
    .where('id', '=', lost!.id)
    .execute();

  const batch = new OutcomeBatch(t.db);
  const now = Date.now();
  const recorded = await Promise.all(
    claimed.map((send, i) =>
      batch.record(send, { to: `to${i}@example.com`, providerMessageId: `<m${i}@x>`, delivered: i % 2 === 0 }, now + i),
    ),
  );
  assert.deepEqual(recorded, [false, true, true, true, true, true]);

  const after = await t.db.kysely.selectFrom('sends').selectAll().where('id', 'in', mine).execute();
  const byId = new Map(after.map((r) => [r.id, r]));
  assert.equal(byId.get(lost!.id)!.status, 'sending', 'the newer attempt is not overwritten');
  ours.forEach((send, j) => {
    const i = j + 1;
    const row = byId.get(send.id)!;
    assert.equal(row.status, 'sent');
    assert.equal(row.to_address, `to${i}@example.com`);
    assert.equal(row.provider_message_id, `<m${i}@x>`);
    assert.equal(Number(row.sent_at), now + i);
    assert.equal(Number(row.processed_at), now + i);
    assert.equal(row.delivered_at === null ? null : Number(row.delivered_at), i % 2 === 0 ? now + i : null);
    assert.equal(row.lease_until, null);
    assert.equal(row.reason, null);
  });
});

test('SQLite: an outcome is committed in the turn of the event loop that read the answer', {
  skip: process.env.DATABASE_URL ? 'SQLite only: on PostgreSQL an outcome is one statement, sent in the same turn' : false,
}, async () => {
  const [send] = await claimedSends(1);
  // Another connection to the file sees what is committed (in the WAL), as a restarted process
  // would after a crash: not the transaction still open on Herald's connection.
  const other = new SqliteDatabase(join(t.config.dataDir, 'herald.db'), { readonly: true });
  try {
    const status = () => (other.prepare('select status from sends where id = ?').get(send!.id) as { status: string }).status;
    const recorded = new OutcomeBatch(t.db).record(
      send!,
      { to: 'to@example.com', providerMessageId: '<m@x>', delivered: true },
      Date.now(),
    );
    // The check phase of this turn, after the commit queue's own: an outcome that waited for
    // another turn (as it once did, 1 to 10 ms under a send burst) is not committed yet here.
    const inThisTurn = await new Promise<string>((resolve) => setImmediate(() => resolve(status())));
    assert.equal(inThisTurn, 'sent');
    assert.equal(await recorded, true);
  } finally {
    other.close();
  }
});
