import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { nextDueAt } from '../../src/dispatcher/dispatch.repo.js';
import { claimBatch } from '../../src/dispatcher/dispatch-claim.js';
import { insertSend, makeEmailCampaign, makeTenant } from '../helpers/factories.js';
import { startService, type TestService } from '../helpers/harness.js';

/**
 * On PostgreSQL the claim's statement also reads the queue's look-ahead (dispatch.repo.ts,
 * lookAheadOfClaim), so a claim that comes back short costs one round trip, not two. It must
 * tell the loop what nextDueAt, read once the claim has committed, would: the same moment, or
 * both "now or before" (the loop then claims again at once either way). A database of its own
 * and no dispatcher: every send in the queue is this file's.
 */
let t: TestService;
let accountId: string;
let campaignId: string;
before(async () => {
  t = await startService({ role: 'api', ownDatabase: true });
  const tenant = await makeTenant(t.db, t.config);
  accountId = tenant.accountId;
  campaignId = (await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 600 })).id;
});
after(() => t.close());
beforeEach(async () => {
  await t.db.kysely.deleteFrom('sends').execute();
});

const LEASE_MS = 60_000;

/** Claims `limit` at `now`; answers the claim's look-ahead and nextDueAt's, each as the loop reads it (a moment not after now is now). */
async function claimAndLook(now: number, limit: number) {
  const claim = await claimBatch(t.db, now, LEASE_MS, limit);
  const after = await nextDueAt(t.db);
  const asLoopReads = (at: number | null | undefined) => (at === null || at === undefined ? 'nothing' : Math.max(at, now));
  return { claimed: claim.sends.length, lookAhead: asLoopReads(claim.nextDueAt), nextDueAt: asLoopReads(after) };
}

const send = (options: Parameters<typeof insertSend>[3]) => insertSend(t.db, accountId, campaignId, options);

test('PostgreSQL: the look-ahead a claim reads is what nextDueAt reads after it', async (c) => {
  if (!process.env.DATABASE_URL) return c.skip('PostgreSQL only: the SQLite claim reads no look-ahead');
  const now = Date.now();
  const cases: { name: string; setUp: () => Promise<unknown>; limit: number; expect: number | 'nothing' }[] = [
    { name: 'an empty queue', setUp: async () => undefined, limit: 4, expect: 'nothing' },
    {
      name: 'more due than the limit: due now',
      setUp: () => Promise.all([1, 2, 3].map((i) => send({ status: 'queued', at: now - 1_000 * i }))),
      limit: 2,
      expect: now,
    },
    {
      name: 'a delay not due yet, behind the front',
      setUp: () => send({ status: 'pending', at: now + 30_000 }),
      limit: 4,
      expect: now + 30_000,
    },
    {
      name: 'a restarted send at the front: re-armed, it wakes at its due time',
      setUp: () => send({ status: 'pending', at: now + 45_000, wakeAt: now - 5_000 }),
      limit: 4,
      expect: now + 45_000,
    },
    {
      name: "another worker's lease",
      setUp: () => send({ status: 'sending', at: now - 10_000, leaseUntil: now + 20_000, attempts: 1 }),
      limit: 4,
      expect: now + 20_000,
    },
    {
      name: "a claimed send's lease, when nothing else waits",
      setUp: () => send({ status: 'queued', at: now - 1_000 }),
      limit: 4,
      expect: now + LEASE_MS,
    },
    {
      name: 'an expired lease taken over: its old lease no longer counts',
      setUp: () => send({ status: 'sending', at: now - 90_000, leaseUntil: now - 1_000, attempts: 1 }),
      limit: 4,
      expect: now + LEASE_MS,
    },
  ];
  for (const { name, setUp, limit, expect } of cases) {
    await t.db.kysely.deleteFrom('sends').execute();
    await setUp();
    const seen = await claimAndLook(now, limit);
    assert.equal(seen.lookAhead, seen.nextDueAt, `${name}: the claim's look-ahead and nextDueAt's`);
    assert.equal(seen.lookAhead, expect, name);
  }
});
