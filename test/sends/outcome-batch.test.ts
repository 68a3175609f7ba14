import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
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

test('outcomes written together: each recorded with its own values, a taken-over claim left alone', async () => {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const api = apiClient(t.app, tenant.key);
  const mine: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: `${uniq('batch')}@example.com`, name: 'Batch Test' } });
    assert.equal(r.body.status, 'queued', JSON.stringify(r.body));
    mine.push(r.body.sendId);
  }
  // Claimed as a worker would (status sending, attempt 1), only these: other test files on a
  // shared database may have due sends of their own, which this test must not take.
  await t.db.kysely
    .updateTable('sends')
    .set({ status: 'sending', attempts: 1, lease_until: Date.now() + 60_000 })
    .where('id', 'in', mine)
    .execute();
  const rows = await t.db.kysely.selectFrom('sends').selectAll().where('id', 'in', mine).orderBy('id').execute();
  const claimed: ClaimedSend[] = rows.map((r) => ({
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
  assert.equal(claimed.length, 6);
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
