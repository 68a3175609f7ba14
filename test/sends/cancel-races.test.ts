import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { claimDueSends } from '../../src/dispatcher/dispatch.repo.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign, sendRow, sleep, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * A cancel racing the two other writers of a pending send: a worker's claim and a Delay
 * restart. Whatever the order, exactly one outcome happened and every answer says which: a cancel
 * answers `cancelled: true` only when it cancelled the send. On PostgreSQL the cancel is one
 * autocommit statement (issue 12) that re-checks `status = 'pending'` on the newest row once
 * the other writer lets go of it. The process serves the API only: no dispatcher of its own
 * claims anything behind the test's back.
 */
const url = process.env.DATABASE_URL;
let t: TestHerald;
before(async () => {
  // Many requests in a row for one key: the rate limit is not under test here.
  t = await startTestHerald({ RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' }, { role: 'api' });
});
after(() => t.close());

async function pendingSend() {
  const tenant = await makeTenant(t.db, t.config);
  const api = apiClient(t.app, tenant.key);
  const email = randomEmail();
  assert.equal((await api.post('/api/leads', { email, name: 'Racing One' })).status, 200);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 600 });
  const trigger = () => api.post('/api/campaigns/trigger', { campaignId, lead: email });
  const cancel = () => api.post('/api/campaigns/cancel', { campaignId, lead: email });
  const first = await trigger();
  assert.equal(first.body.status, 'pending', JSON.stringify(first.body));
  return { campaignId, sendId: first.body.sendId as string, trigger, cancel };
}

async function sendsOf(campaignId: string) {
  return t.db.kysely.selectFrom('sends').select(['id', 'status']).where('campaign_id', '=', campaignId).orderBy('created_at').execute();
}

describe('side by side, both engines', () => {
  test('a cancel and a worker claim of the same due send: exactly one wins, and the cancel says which', async () => {
    for (let round = 0; round < 8; round++) {
      const s = await pendingSend();
      // Due long ago: the earliest of the queue, so the claim below picks it even when other test
      // files left due sends in a shared database.
      await t.db.kysely.updateTable('sends').set({ due_at: 0 }).where('id', '=', s.sendId).execute();
      // The claim starts 0 to 3 ms after the cancel, so that rounds see both orders.
      const claim = sleep(round % 4).then(() => claimDueSends(t.db, Date.now(), 60_000, 100));
      const [cancel, claimed] = await Promise.all([s.cancel(), claim]);
      assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
      const claimedIt = claimed.some((c) => c.id === s.sendId);
      assert.notEqual(cancel.body.cancelled, claimedIt, 'exactly one of the two wins');
      assert.equal((await sendRow(t.db, s.sendId)).status, claimedIt ? 'sending' : 'cancelled');
    }
  });

  test('a cancel and a Delay restart of the same pending send: the answers tell the order', async () => {
    for (let round = 0; round < 8; round++) {
      const s = await pendingSend();
      // One of the two starts up to 2 ms after the other, so that rounds see both orders.
      const later = <T>(request: () => Promise<T>, delayed: boolean) => sleep(delayed ? round % 3 : 0).then(request);
      const [restart, cancel] = await Promise.all([later(s.trigger, round % 2 === 0), later(s.cancel, round % 2 === 1)]);
      assert.equal(restart.status, 200, JSON.stringify(restart.body));
      assert.equal(restart.body.status, 'pending');
      // The send was pending and only the cancel ends it: the cancel always cancels it.
      assert.equal(cancel.body.cancelled, true, JSON.stringify(cancel.body));
      const rows = await sendsOf(s.campaignId);
      if (restart.body.sendId === s.sendId) {
        // Restart first (same send, timer restarted), then the cancel: nothing is left waiting.
        assert.deepEqual(rows, [{ id: s.sendId, status: 'cancelled' }]);
      } else {
        // Cancel first: the trigger found nothing pending and started a new send.
        assert.deepEqual(rows, [
          { id: s.sendId, status: 'cancelled' },
          { id: restart.body.sendId, status: 'pending' },
        ]);
      }
    }
  });
});

describe('one waits for the other, PostgreSQL', { skip: !url && 'PostgreSQL only (DATABASE_URL unset)' }, () => {
  /** Sends `request` while another client's open transaction holds the send's row (`write`), then ends that transaction. */
  async function whileHeld<T>(sendId: string, write: string, request: () => Promise<T>, end: 'commit' | 'rollback'): Promise<T> {
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('begin');
      await other.query(write, [sendId]);
      const answer = request();
      await sleep(300); // the request reaches the send's row and waits for it
      await other.query(end);
      return await answer;
    } finally {
      await other.end();
    }
  }

  test('a cancel waiting for a worker claim that commits: cancelled false, the worker has the send', async () => {
    const s = await pendingSend();
    const res = await whileHeld(s.sendId, "update sends set status = 'sending', attempts = attempts + 1 where id = $1", s.cancel, 'commit');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.cancelled, false);
    assert.equal((await sendRow(t.db, s.sendId)).status, 'sending');
  });

  test('a cancel waiting for a worker claim that rolls back: cancelled true', async () => {
    const s = await pendingSend();
    const res = await whileHeld(
      s.sendId,
      "update sends set status = 'sending', attempts = attempts + 1 where id = $1",
      s.cancel,
      'rollback',
    );
    assert.equal(res.body.cancelled, true, JSON.stringify(res.body));
    assert.equal((await sendRow(t.db, s.sendId)).status, 'cancelled');
  });

  test('a cancel waiting for a Delay restart: the restarted send is cancelled', async () => {
    const s = await pendingSend();
    const res = await whileHeld(
      s.sendId,
      "update sends set due_at = due_at + 1000 where id = $1 and status = 'pending'",
      s.cancel,
      'commit',
    );
    assert.equal(res.body.cancelled, true, JSON.stringify(res.body));
    assert.equal((await sendRow(t.db, s.sendId)).status, 'cancelled');
  });

  test('a Delay restart waiting for a cancel: the trigger starts a new send', async () => {
    const s = await pendingSend();
    const res = await whileHeld(
      s.sendId,
      "update sends set status = 'cancelled' where id = $1 and status = 'pending'",
      s.trigger,
      'commit',
    );
    assert.equal(res.body.status, 'pending', JSON.stringify(res.body));
    assert.notEqual(res.body.sendId, s.sendId);
    assert.deepEqual(await sendsOf(s.campaignId), [
      { id: s.sendId, status: 'cancelled' },
      { id: res.body.sendId, status: 'pending' },
    ]);
  });
});
