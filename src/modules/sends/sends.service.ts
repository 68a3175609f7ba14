import { kyselyOf, type Queryable } from '../../db/queryable.js';
import { countCampaignSends, countCampaignSendsByDay, type QueueDepth, sendQueueDepth } from './sends.repo.js';

export { type QueueDepth, sendQueueDepth };

/**
 * What other modules may ask of the sends module about a campaign's sends (its statistics),
 * so they never reach into sends.repo. Test sends from the admin panel are left out of both.
 */

/** The campaign's real sends grouped by status, with how many were processed / delivered. */
export function campaignSendCounts(db: Queryable, accountId: string, campaignId: string) {
  return countCampaignSends(kyselyOf(db), accountId, campaignId);
}

/** The campaign's real sends per UTC day of one of their moments since `since` (epoch ms). */
export function campaignSendsByDay(
  db: Queryable,
  accountId: string,
  campaignId: string,
  moment: 'sent_at' | 'updated_at' | 'processed_at' | 'delivered_at' | 'bounced_at',
  since: number,
  status?: 'sent' | 'error',
) {
  return countCampaignSendsByDay(db, accountId, campaignId, moment, since, status);
}
