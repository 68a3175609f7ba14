import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SendStatus } from '../../src/db/schema.js';
import { createCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { campaignDailyStats, type DailyStats } from '../../src/modules/campaigns/daily-stats.js';
import { type CampaignTestEnv, emailCampaign, insertEngagement, insertSend, openTestDb, rejectsWith } from '../campaigns/helpers.js';
import { makeAccount } from '../helpers/factories.js';

/** Per-day statistics: each measure on the UTC day it happened, zeros for quiet days, test sends left out. */
let t: CampaignTestEnv;
before(async () => {
  t = await openTestDb();
});
after(() => t.close());

const DAY = 86_400_000;
/** "Now" for these tests: 2026-11-22 12:00 UTC. */
const NOW = Date.UTC(2026, 10, 22, 12);
/** A moment `days` days before NOW's day, at `hour` UTC. */
const at = (days: number, hour: number) => Date.UTC(2026, 10, 22 - days, hour);

async function campaign() {
  const { id: accountId } = await makeAccount(t.db);
  const { id: campaignId } = await createCampaign(t.db, t.config, accountId, emailCampaign());
  return { accountId, campaignId };
}

interface SendTimes {
  status: SendStatus;
  sent?: number;
  processed?: number;
  delivered?: number;
  updated?: number;
  test?: boolean;
}

async function send(c: { accountId: string; campaignId: string }, times: SendTimes) {
  const created = Math.min(...[times.sent, times.processed, times.updated].filter((x): x is number => x !== undefined), NOW);
  return insertSend(t.db, c.accountId, c.campaignId, {
    status: times.status,
    at: created,
    updatedAt: times.updated ?? times.sent ?? created,
    attempts: 1,
    processed: times.processed,
    delivered: times.delivered,
    sentAt: times.sent ?? null,
    test: times.test ? 1 : 0,
  });
}

const engage = (c: { accountId: string; campaignId: string }, s: { id: string; contactId: string }, kind: 'open' | 'click', when: number) =>
  insertEngagement(t.db, c.accountId, c.campaignId, s, kind, when);

const zero = (date: string): DailyStats => ({
  date,
  sent: 0,
  error: 0,
  processed: 0,
  delivered: 0,
  opens: 0,
  uniqueOpens: 0,
  clicks: 0,
  uniqueClicks: 0,
  bounced: 0,
  unsubscribes: 0,
});

describe('campaignDailyStats', () => {
  test('one entry per UTC day, oldest first, today included, zeros for quiet days', async () => {
    const c = await campaign();
    const days = await campaignDailyStats(t.db, c.accountId, c.campaignId, 7, NOW);
    assert.deepEqual(days, ['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22'].map(zero));
    assert.deepEqual(
      (await campaignDailyStats(t.db, c.accountId, c.campaignId, 1, NOW)).map((d) => d.date),
      ['2026-11-22'],
    );
  });

  test('sent, error, processed and delivered fall on the day each happened', async () => {
    const c = await campaign();
    await send(c, { status: 'sent', processed: at(2, 23), sent: at(2, 23), delivered: at(1, 0) });
    await send(c, { status: 'sent', processed: at(0, 1), sent: at(0, 1) });
    await send(c, { status: 'error', processed: at(1, 8), updated: at(1, 9) });
    await send(c, { status: 'queued' });
    const days = await campaignDailyStats(t.db, c.accountId, c.campaignId, 3, NOW);
    assert.deepEqual(days, [
      { ...zero('2026-11-20'), sent: 1, processed: 1 },
      { ...zero('2026-11-21'), error: 1, processed: 1, delivered: 1 },
      { ...zero('2026-11-22'), sent: 1, processed: 1 },
    ]);
  });

  test('opens and clicks per day: totals, and distinct sends as unique', async () => {
    const c = await campaign();
    const a = await send(c, { status: 'sent', sent: at(3, 10), processed: at(3, 10) });
    const b = await send(c, { status: 'sent', sent: at(3, 10), processed: at(3, 10) });
    await engage(c, a, 'open', at(1, 10));
    await engage(c, a, 'open', at(1, 11));
    await engage(c, a, 'open', at(0, 9));
    await engage(c, b, 'open', at(0, 10));
    for (const hour of [1, 2, 3]) await engage(c, a, 'click', at(0, hour));
    const [yesterday, today] = (await campaignDailyStats(t.db, c.accountId, c.campaignId, 2, NOW)).map((d) => [
      d.opens,
      d.uniqueOpens,
      d.clicks,
      d.uniqueClicks,
    ]);
    assert.deepEqual(yesterday, [2, 1, 0, 0]);
    assert.deepEqual(today, [2, 2, 3, 1]);
  });

  test('what happened before the window, or after now, is left out', async () => {
    const c = await campaign();
    const old = await send(c, { status: 'sent', sent: at(10, 12), processed: at(10, 12), delivered: at(10, 12) });
    await engage(c, old, 'open', at(10, 13));
    await engage(c, old, 'click', at(-1, 1));
    const days = await campaignDailyStats(t.db, c.accountId, c.campaignId, 7, NOW);
    assert.deepEqual(
      days.filter((d) => JSON.stringify(d) !== JSON.stringify(zero(d.date))),
      [],
    );
  });

  test('test sends from the admin panel are not counted', async () => {
    const c = await campaign();
    await send(c, { status: 'sent', sent: at(0, 1), processed: at(0, 1), delivered: at(0, 1), test: true });
    await send(c, { status: 'error', processed: at(0, 1), updated: at(0, 2), test: true });
    assert.deepEqual(await campaignDailyStats(t.db, c.accountId, c.campaignId, 1, NOW), [zero('2026-11-22')]);
  });

  test('days must be a whole number from 1 to 366', async () => {
    const c = await campaign();
    for (const days of [0, -1, 1.5, 367, Number.NaN])
      await rejectsWith(campaignDailyStats(t.db, c.accountId, c.campaignId, days, NOW), 'VALIDATION', '/days');
    assert.equal((await campaignDailyStats(t.db, c.accountId, c.campaignId, 366, NOW)).length, 366);
  });

  test("another account's campaign is not found, like an unknown one", async () => {
    const mine = await campaign();
    const theirs = await campaign();
    await send(theirs, { status: 'sent', sent: NOW - DAY / 2, processed: NOW - DAY / 2 });
    await rejectsWith(campaignDailyStats(t.db, mine.accountId, theirs.campaignId, 7, NOW), 'CAMPAIGN_NOT_FOUND');
    await rejectsWith(campaignDailyStats(t.db, mine.accountId, 'cmp_nope', 7, NOW), 'CAMPAIGN_NOT_FOUND');
    await rejectsWith(campaignDailyStats(t.db, 'acc_nope', theirs.campaignId, 7, NOW), 'ACCOUNT_NOT_FOUND');
  });
});
