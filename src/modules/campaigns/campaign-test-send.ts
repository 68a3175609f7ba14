import type { Db } from '../../db/connect.js';
import { invalid } from '../../errors.js';
import { checkTriggerDataSize } from '../../json-limits.js';
import { queueTestSend } from '../sends/test-send.service.js';
import { missingForActivation } from './campaign-settings.js';
import { getCampaign } from './campaigns.service.js';

/**
 * `POST /campaigns/:id/test-send`: a real send of the campaign to one contact, queued due now
 * and delivered by the dispatcher through the campaign's channel, marked `test`. It skips the
 * trigger rules (activation, re-entry, allowance) so a draft can be tried, and it is left out
 * of statistics and of the allowance. An opted-out contact still gets nothing: the spec allows
 * no message to them, whoever asks. `data` stands for a trigger's data (`{{ trigger.* }}`), with
 * the same limits; without it, trigger.* renders empty.
 */
export async function testSend(
  deps: { db: Db; wakeup?: (dueAt: number) => void },
  accountId: string,
  campaignId: string,
  contactId: string,
  data?: Record<string, unknown>,
): Promise<{ sendId: string }> {
  const { db } = deps;
  if (data !== undefined) checkTriggerDataSize(data, '/data');
  const campaign = await getCampaign(db, accountId, campaignId);
  const missing = missingForActivation(campaign);
  if (missing.length > 0)
    throw invalid('/campaign', `the ${campaign.channel} campaign has no ${missing.join(', ')}: complete it before a test send`);

  const now = Date.now();
  const sendId = await queueTestSend(db, campaign, contactId, now, data);
  deps.wakeup?.(now);
  return { sendId };
}
