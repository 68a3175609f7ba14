import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { inTransaction } from '../../src/db/transaction.js';
import {
  campaignStats,
  createCampaign,
  findCampaign,
  getWebhookSecret,
  listCampaigns,
  updateCampaign,
} from '../../src/modules/campaigns/campaigns.service.js';
import { makeAccount } from '../helpers/factories.js';
import { type CampaignTestEnv, campaignRow, emailCampaign, openTestDb, rejectsWith } from './helpers.js';

let t: CampaignTestEnv;
before(async () => {
  t = await openTestDb();
});
after(() => t.close());

/** Two accounts; `mine` owns a campaign that `theirs` must never see or touch. */
async function twoTenants() {
  const mine = (await makeAccount(t.db, { plan: 'pro' })).id;
  const theirs = (await makeAccount(t.db, { plan: 'pro' })).id;
  const { id } = await createCampaign(t.db, t.config, mine, emailCampaign({ webhooks: ['https://93.184.215.14/a'] }));
  return { mine, theirs, id };
}

describe("another account's campaign answers like one that does not exist", () => {
  test('findCampaign gives undefined, also inside a transaction', async () => {
    const { mine, theirs, id } = await twoTenants();
    assert.equal(await findCampaign(t.db.kysely, theirs, id), undefined);
    assert.equal(await findCampaign(t.db.kysely, theirs, 'cmp_nope'), undefined);
    const inTx = await inTransaction(t.db, (tx) => Promise.all([findCampaign(tx, mine, id), findCampaign(tx, theirs, id)]));
    assert.deepEqual([inTx[0]?.id, inTx[1]], [id, undefined]);
  });

  test('update is refused with Campaign not found and changes nothing', async () => {
    const { mine, theirs, id } = await twoTenants();
    const before = await campaignRow(t.db, id);
    const webhooksBefore = (await findCampaign(t.db.kysely, mine, id))!.webhooks;
    await rejectsWith(updateCampaign(t.db, t.config, theirs, id, { name: 'pwned', active: true, webhooks: [] }), 'CAMPAIGN_NOT_FOUND');
    assert.deepEqual(await campaignRow(t.db, id), before);
    assert.deepEqual((await findCampaign(t.db.kysely, mine, id))!.webhooks, webhooksBefore);
  });

  test('stats and the webhook secret are refused with Campaign not found', async () => {
    const { theirs, id } = await twoTenants();
    await rejectsWith(campaignStats(t.db, theirs, id), 'CAMPAIGN_NOT_FOUND');
    await rejectsWith(getWebhookSecret(t.db, t.config, theirs, id), 'CAMPAIGN_NOT_FOUND');
  });

  test("the list holds only the account's own campaigns", async () => {
    const { mine, theirs, id } = await twoTenants();
    assert.deepEqual(await listCampaigns(t.db, theirs), []);
    assert.deepEqual(
      (await listCampaigns(t.db, mine)).map((c) => c.id),
      [id],
    );
  });

  test('an unknown account is ACCOUNT_NOT_FOUND, not an empty answer', async () => {
    const { id } = await twoTenants();
    await rejectsWith(listCampaigns(t.db, 'acc_nope'), 'ACCOUNT_NOT_FOUND');
    await rejectsWith(campaignStats(t.db, 'acc_nope', id), 'ACCOUNT_NOT_FOUND');
    await rejectsWith(getWebhookSecret(t.db, t.config, 'acc_nope', id), 'ACCOUNT_NOT_FOUND');
  });
});
