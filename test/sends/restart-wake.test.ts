import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { nextDueAt } from '../../src/dispatcher/dispatch.repo.js';
import { claimBatch } from '../../src/dispatcher/dispatch-claim.js';
import { updateCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * The queue's index holds `wake_at`, not `due_at` (migration 0024, decisions.md "A restart
 * leaves the queue's index alone"): a Delay restart to a later time leaves `wake_at`, a claim
 * that finds a send awake but not due re-arms it, and nothing goes out before its due time.
 * The process serves the API only: no dispatcher claims behind the test's back.
 */
let t: TestHerald;
before(async () => {
  t = await startTestHerald({}, { role: 'api' });
});
after(() => t.close());

const wakeAndDue = async (sendId: string) => {
  const row = await sendRow(t.db, sendId);
  return { wake: Number(row.wake_at), due: Number(row.due_at), status: row.status };
};

/** Claims at `now` until the queue is empty there; answers the ids claimed (other files' due sends included). */
async function claimAllAt(now: number): Promise<string[]> {
  const claimed: string[] = [];
  for (;;) {
    const { sends } = await claimBatch(t.db, now, 60_000, 100);
    if (sends.length === 0) return claimed;
    claimed.push(...sends.map((s) => s.id));
  }
}

for (const form of ['lead object', 'lead email'] as const) {
  test(`a restart to a later time leaves wake_at; the send is re-armed at its first due time and claimed at its new one (${form})`, async () => {
    const tenant = await makeTenant(t.db, t.config);
    const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 600 });
    const api = apiClient(t.app, tenant.key);
    const email = randomEmail();
    const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada Wake' } });
    assert.equal(first.body.status, 'pending', JSON.stringify(first.body));
    const sendId = first.body.sendId as string;
    const armed = await wakeAndDue(sendId);
    assert.equal(armed.wake, armed.due, 'a new send wakes when it is due');

    await sleep(5);
    const lead = form === 'lead object' ? { email, tags: ['again'] } : email;
    const again = await api.post('/api/campaigns/trigger', { campaignId, lead });
    assert.deepEqual([again.body.status, again.body.sendId], ['pending', sendId], JSON.stringify(again.body));
    const restarted = await wakeAndDue(sendId);
    assert.ok(restarted.due > armed.due, `due moved later (${armed.due} -> ${restarted.due})`);
    assert.equal(restarted.wake, armed.wake, 'wake_at left as it was');
    assert.ok((await nextDueAt(t.db)) !== undefined);

    // At the first due time the send is awake but not due: not claimed, re-armed to its due time.
    assert.ok(!(await claimAllAt(armed.due)).includes(sendId), 'not claimed before its due time');
    assert.deepEqual(await wakeAndDue(sendId), { wake: restarted.due, due: restarted.due, status: 'pending' });
    // At its due time it is claimed.
    assert.ok((await claimAllAt(restarted.due)).includes(sendId), 'claimed at its due time');
    assert.equal((await wakeAndDue(sendId)).status, 'sending');
  });
}

test('a restart to an earlier time (a shorter delay since) moves wake_at with due_at', async () => {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 3600 });
  const api = apiClient(t.app, tenant.key);
  const email = randomEmail();
  const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada Wake' } });
  const sendId = first.body.sendId as string;
  await updateCampaign(t.db, t.config, tenant.accountId, campaignId, { delaySeconds: 60 });
  const again = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, tags: ['sooner'] } });
  assert.deepEqual([again.body.status, again.body.sendId], ['pending', sendId], JSON.stringify(again.body));
  const { wake, due } = await wakeAndDue(sendId);
  assert.ok(due <= Date.now() + 60_000, `due within the new delay (${due})`);
  assert.equal(wake, due, 'wake_at moved with the earlier due time');
  assert.ok((await claimAllAt(due)).includes(sendId), 'claimed at its new due time');
});

test('a waiting send written without wake_at (its default, 0) is re-armed by a claim, not sent', async () => {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 600 });
  const api = apiClient(t.app, tenant.key);
  const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: randomEmail(), name: 'Ada Wake' } });
  const sendId = first.body.sendId as string;
  await t.db.kysely.updateTable('sends').set({ wake_at: 0 }).where('id', '=', sendId).execute();
  const { due } = await wakeAndDue(sendId);
  assert.ok(!(await claimAllAt(Date.now())).includes(sendId));
  assert.deepEqual(await wakeAndDue(sendId), { wake: due, due, status: 'pending' });
});
