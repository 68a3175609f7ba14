import { kyselyOf, type Queryable } from '../db/queryable.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable } from '../db/schema.js';

/**
 * SQL of the webhook delivery log (the admin panel's and the CLI's reading of it), apart from
 * deliveries.repo.ts, which is the worker's: claim, record, wake-up.
 */

/** The campaign's deliveries, newest first, at most `limit`. */
export async function selectCampaignDeliveries(
  db: Queryable,
  accountId: string,
  campaignId: string,
  limit: number,
): Promise<WebhookDeliveriesTable[]> {
  return kyselyOf(db)
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Every attempt of these deliveries, oldest first. */
export async function selectDeliveryAttempts(db: Queryable, accountId: string, deliveryIds: string[]): Promise<WebhookAttemptsTable[]> {
  if (deliveryIds.length === 0) return [];
  return kyselyOf(db)
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('attempted_at')
    .orderBy('id')
    .execute();
}
