import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SendStatus } from '../../src/db/schema.js';
import { campaignStats, createCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { makeAccount } from '../helpers/factories.js';
import { type CampaignTestEnv, emailCampaign, insertEngagement, insertSend, openTestDb } from './helpers.js';

let t: CampaignTestEnv;
before(async () => {
  t = await openTestDb();
});
after(() => t.close());

const ZERO = {
  sent: 0,
  rejected: 0,
  optout: 0,
  error: 0,
  pending: 0,
  cancelled: 0,
  queued: 0,
  processed: 0,
  delivered: 0,
  opens: 0,
  uniqueOpens: 0,
  clicks: 0,
  uniqueClicks: 0,
  bounced: 0,
  unsubscribes: 0,
};

async function newCampaign(acc?: string) {
  const accountId = acc ?? (await makeAccount(t.db)).id;
  const { id } = await createCampaign(t.db, t.config, accountId, emailCampaign());
  return { acc: accountId, id };
}

async function sends(acc: string, id: string, statuses: SendStatus[]) {
  for (const status of statuses) await insertSend(t.db, acc, id, { status });
}

describe('campaign stats', () => {
  test('a campaign without sends has every member at 0: the members of interfaces.md, then bounced and unsubscribes', async () => {
    const { acc, id } = await newCampaign();
    const stats = await campaignStats(t.db, acc, id);
    assert.deepEqual(stats, ZERO);
    assert.deepEqual(Object.keys(stats), Object.keys(ZERO), 'same members, same order');
  });

  test('each status is counted under its own member', async () => {
    const { acc, id } = await newCampaign();
    await sends(acc, id, [
      'sent',
      'sent',
      'sent',
      'rejected',
      'rejected',
      'optout',
      'error',
      'error',
      'pending',
      'cancelled',
      'queued',
      'queued',
    ]);
    assert.deepEqual(await campaignStats(t.db, acc, id), {
      ...ZERO,
      sent: 3,
      rejected: 2,
      optout: 1,
      error: 2,
      pending: 1,
      cancelled: 1,
      queued: 2,
    });
  });

  test('a send being handed to the channel (sending) counts as queued', async () => {
    const { acc, id } = await newCampaign();
    await sends(acc, id, ['queued', 'sending', 'sending']);
    assert.deepEqual(await campaignStats(t.db, acc, id), { ...ZERO, queued: 3 });
  });

  test('processed and delivered count the sends with those times set, whatever their status', async () => {
    const { acc, id } = await newCampaign();
    await insertSend(t.db, acc, id, { status: 'sent', processed: true, delivered: true });
    await insertSend(t.db, acc, id, { status: 'sent', processed: true, delivered: true });
    await insertSend(t.db, acc, id, { status: 'sent', processed: true });
    await insertSend(t.db, acc, id, { status: 'error', processed: true });
    await insertSend(t.db, acc, id, { status: 'queued' });
    const stats = await campaignStats(t.db, acc, id);
    assert.deepEqual([stats.processed, stats.delivered, stats.sent, stats.error, stats.queued], [4, 2, 3, 1, 1]);
  });

  test('opens and clicks count every engagement; the unique counts count distinct sends', async () => {
    const { acc, id } = await newCampaign();
    const a = await insertSend(t.db, acc, id, { status: 'sent', processed: true });
    const b = await insertSend(t.db, acc, id, { status: 'sent', processed: true });
    await insertSend(t.db, acc, id, { status: 'sent', processed: true });
    for (const kind of ['open', 'open', 'open'] as const) await insertEngagement(t.db, acc, id, a, kind);
    await insertEngagement(t.db, acc, id, b, 'open');
    await insertEngagement(t.db, acc, id, a, 'click');
    await insertEngagement(t.db, acc, id, a, 'click');
    const stats = await campaignStats(t.db, acc, id);
    assert.deepEqual([stats.opens, stats.uniqueOpens, stats.clicks, stats.uniqueClicks], [4, 2, 2, 1]);
  });

  test('sends and engagements of other campaigns, same account or not, are not counted', async () => {
    const { acc, id } = await newCampaign();
    const mine = await insertSend(t.db, acc, id, { status: 'sent', processed: true, delivered: true });
    await insertEngagement(t.db, acc, id, mine, 'open');

    const sibling = await newCampaign(acc);
    const s = await insertSend(t.db, acc, sibling.id, { status: 'sent', processed: true, delivered: true });
    await insertEngagement(t.db, acc, sibling.id, s, 'open');
    await insertEngagement(t.db, acc, sibling.id, s, 'click');
    await sends(acc, sibling.id, ['rejected', 'pending', 'queued']);

    const stranger = await newCampaign();
    const x = await insertSend(t.db, stranger.acc, stranger.id, { status: 'sent', processed: true });
    await insertEngagement(t.db, stranger.acc, stranger.id, x, 'open');

    assert.deepEqual(await campaignStats(t.db, acc, id), { ...ZERO, sent: 1, processed: 1, delivered: 1, opens: 1, uniqueOpens: 1 });
  });
});
