import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { claimBatch } from '../../src/dispatcher/dispatch-claim.js';
import { DELETED_CAMPAIGN_REASON, deleteCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { apiClient, assertApiError } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign, sendRow, sleep, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * A cancel racing the other writers of a pending send: a worker's claim, a Delay restart and
 * the admin panel deleting the campaign (docs/decisions.md, Events and cancels in one
 * statement on PostgreSQL; Editing and deleting). Whatever the order, exactly one outcome happened and every answer says which: a cancel
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
  return { accountId: tenant.accountId, campaignId, sendId: first.body.sendId as string, trigger, cancel };
}

type PendingSend = Awaited<ReturnType<typeof pendingSend>>;

/** Rounds of a race, each on a pending send of its own (in a fresh account), so that rounds see different orders. */
async function inRounds(play: (s: PendingSend, round: number) => Promise<void>): Promise<void> {
  for (let round = 0; round < 8; round++) await play(await pendingSend(), round);
}

/** `a` and `b` at once, one of them (which, alternating with the round) started up to 2 ms after the other, so that rounds see both orders. */
function sideBySide<A, B>(round: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  const later = <T>(request: () => Promise<T>, delayed: boolean) => sleep(delayed ? round % 3 : 0).then(request);
  return Promise.all([later(a, round % 2 === 0), later(b, round % 2 === 1)]);
}

async function sendsOf(campaignId: string) {
  return t.db.kysely.selectFrom('sends').select(['id', 'status']).where('campaign_id', '=', campaignId).orderBy('created_at').execute();
}

/** The campaign's sends with their reason, and whether the campaign is deleted: what a delete racing a cancel may change. */
async function afterDelete(campaignId: string) {
  const sends = await t.db.kysely
    .selectFrom('sends')
    .select(['id', 'status', 'reason'])
    .where('campaign_id', '=', campaignId)
    .orderBy('created_at')
    .execute();
  const campaign = await t.db.kysely.selectFrom('campaigns').select('deleted_at').where('id', '=', campaignId).executeTakeFirstOrThrow();
  return { sends, deleted: campaign.deleted_at !== null };
}

describe('side by side, both engines', () => {
  test('a cancel and a worker claim of the same due send: exactly one wins, and the cancel says which', async () => {
    await inRounds(async (s, round) => {
      // Due long ago: the earliest of the queue, so the claim below picks it even when other test
      // files left due sends in a shared database.
      await t.db.kysely.updateTable('sends').set({ due_at: 0, wake_at: 0 }).where('id', '=', s.sendId).execute();
      // The claim starts 0 to 3 ms after the cancel, so that rounds see both orders.
      const claim = sleep(round % 4).then(() => claimBatch(t.db, Date.now(), 60_000, 100).then((batch) => batch.sends));
      const [cancel, claimed] = await Promise.all([s.cancel(), claim]);
      assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
      const claimedIt = claimed.some((c) => c.id === s.sendId);
      assert.notEqual(cancel.body.cancelled, claimedIt, 'exactly one of the two wins');
      assert.equal((await sendRow(t.db, s.sendId)).status, claimedIt ? 'sending' : 'cancelled');
    });
  });

  test('a cancel and a Delay restart of the same pending send: the answers tell the order', async () => {
    await inRounds(async (s, round) => {
      const [restart, cancel] = await sideBySide(round, s.trigger, s.cancel);
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
    });
  });

  test('a cancel and a campaign delete of the same pending send: one of them cancels it, and the answers say which', async (context) => {
    const seen = new Set<string>();
    await inRounds(async (s, round) => {
      const [deleted, cancel] = await sideBySide(round, () => deleteCampaign(t.db, s.accountId, s.campaignId), s.cancel);
      const state = await afterDelete(s.campaignId);
      assert.equal(state.deleted, true, 'the delete always deletes the campaign');
      if (cancel.status === 200 && cancel.body.cancelled === true) {
        // Cancel first: the delete found nothing waiting.
        seen.add('cancel first');
        assert.equal(deleted.cancelledSends, 0);
        assert.deepEqual(state.sends, [{ id: s.sendId, status: 'cancelled', reason: null }]);
      } else {
        // Delete first: the cancel either saw the campaign gone (404, as an unknown one) or, on
        // PostgreSQL, read it live and then waited for the delete's cancel of the send (200 false).
        if (cancel.status === 404) assertApiError(cancel, 404, 'Not Found', 'Campaign not found');
        else {
          assert.ok(url, `only PostgreSQL's cancel can wait for the delete: ${JSON.stringify(cancel.body)}`);
          assert.deepEqual([cancel.status, cancel.body.cancelled], [200, false], JSON.stringify(cancel.body));
        }
        seen.add(`delete first, ${cancel.status}`);
        assert.equal(deleted.cancelledSends, 1);
        assert.deepEqual(state.sends, [{ id: s.sendId, status: 'cancelled', reason: DELETED_CAMPAIGN_REASON }]);
      }
    });
    // Which orders the rounds saw (not asserted: timing decides), for whoever reads the output.
    context.diagnostic(`orders seen: ${[...seen].join('; ')}`);
  });
});

describe('one waits for the other, PostgreSQL', { skip: !url && 'PostgreSQL only (DATABASE_URL unset)' }, () => {
  /** `work` in an open transaction of another client (not the app's pool); `work` ends it. */
  async function inOtherTransaction<T>(work: (other: pg.Client) => Promise<T>): Promise<T> {
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('begin');
      return await work(other);
    } finally {
      await other.end();
    }
  }

  /** Until `count` statements of this database wait for a lock (the requests reached the held row). */
  async function untilWaiting(client: pg.Client, count: number): Promise<void> {
    for (let waited = 0; ; waited += 10) {
      // pg_stat_activity is read once per transaction unless told otherwise, and `client` is in one.
      await client.query('select pg_stat_clear_snapshot()');
      const { rows } = await client.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      if (rows[0].n >= count) return;
      assert.ok(waited < 5000, `${count} statements waiting for a lock within 5 s (${rows[0].n})`);
      await sleep(10);
    }
  }

  /** Sends `request` while another client's open transaction holds the send's row (`write`), then ends that transaction. */
  function whileHeld<T>(sendId: string, write: string, request: () => Promise<T>, end: 'commit' | 'rollback'): Promise<T> {
    return inOtherTransaction(async (other) => {
      await other.query(write, [sendId]);
      const answer = request();
      await untilWaiting(other, 1); // the request reached the send's row and waits for it
      await other.query(end);
      return await answer;
    });
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

  /**
   * Runs `first` then `second` while another client holds the send's row (SELECT ... FOR
   * UPDATE), each once it waits for that row, then lets the row go: PostgreSQL hands it to the
   * waiters in the order they came, so `first` writes the send before `second` re-checks it.
   */
  function queuedOnRow<A, B>(sendId: string, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
    return inOtherTransaction(async (holder) => {
      await holder.query('select id from sends where id = $1 for update', [sendId]);
      const a = first();
      await untilWaiting(holder, 1);
      const b = second();
      await untilWaiting(holder, 2);
      await holder.query('rollback');
      return [await a, await b];
    });
  }

  test('a cancel waiting for a campaign delete: 200 cancelled false (decisions.md), the delete cancelled the send', async () => {
    const s = await pendingSend();
    // The cancel's statement starts while the delete is not committed: it reads the campaign
    // live, then waits for the send's row, which the delete then cancels and commits.
    const [deleted, cancel] = await queuedOnRow(s.sendId, () => deleteCampaign(t.db, s.accountId, s.campaignId), s.cancel);
    assert.deepEqual(deleted, { cancelledSends: 1 });
    assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    assert.equal(cancel.body.cancelled, false);
    assert.deepEqual(await afterDelete(s.campaignId), {
      sends: [{ id: s.sendId, status: 'cancelled', reason: DELETED_CAMPAIGN_REASON }],
      deleted: true,
    });
    // Once the delete has committed, a cancel answers as for an unknown campaign.
    assertApiError(await s.cancel(), 404, 'Not Found', 'Campaign not found');
  });

  test('a campaign delete waiting for a cancel: cancelled true, the delete finds nothing left to cancel', async () => {
    const s = await pendingSend();
    const [cancel, deleted] = await queuedOnRow(s.sendId, s.cancel, () => deleteCampaign(t.db, s.accountId, s.campaignId));
    assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    assert.equal(cancel.body.cancelled, true);
    assert.deepEqual(deleted, { cancelledSends: 0 });
    assert.deepEqual(await afterDelete(s.campaignId), { sends: [{ id: s.sendId, status: 'cancelled', reason: null }], deleted: true });
  });
});
