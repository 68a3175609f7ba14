import type { Db } from '../db/connect.js';
import type { WebhookDeliveriesTable } from '../db/schema.js';
import { AppError } from '../errors.js';
import { parseStoredJson } from '../json-limits.js';
import { campaignExists } from '../modules/campaigns/campaigns.service.js';
import { iso } from '../time.js';
import { selectCampaignDeliveries, selectDeliveryAttempts } from './delivery-log.repo.js';
import { webhookMessageId } from './enqueue.js';

export interface WebhookAttemptView {
  id: string;
  attemptedAt: string;
  durationMs: number;
  /** The receiver's HTTP status; null when there was no answer (see error). */
  statusCode: number | null;
  error: string | null;
}

export interface WebhookDeliveryView {
  id: string;
  /** The `webhook-id` header sent on every attempt. */
  messageId: string;
  sendId: string;
  position: number;
  url: string;
  status: WebhookDeliveriesTable['status'];
  /** The exact JSON that was signed and sent. */
  payload: unknown;
  /** When the next attempt is due; null while one runs and once delivered or failed. */
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  /** Oldest first. */
  attempts: WebhookAttemptView[];
}

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/**
 * The webhook delivery log of one campaign, newest delivery first, each with its attempts
 * (the admin panel's log). Another account's campaign answers like one that does not exist.
 */
export async function listWebhookDeliveries(
  db: Db,
  accountId: string,
  campaignId: string,
  options: { limit?: number } = {},
): Promise<WebhookDeliveryView[]> {
  const limit = Math.min(Math.max(options.limit ?? DEFAULT_LIST_LIMIT, 1), MAX_LIST_LIMIT);
  // Another account's campaign answers like one that does not exist.
  if (!(await campaignExists(db, accountId, campaignId))) throw new AppError('CAMPAIGN_NOT_FOUND');
  const deliveries = await selectCampaignDeliveries(db, accountId, campaignId, limit);
  if (deliveries.length === 0) return [];
  const attempts = await selectDeliveryAttempts(
    db,
    accountId,
    deliveries.map((d) => d.id),
  );
  const byDelivery = new Map<string, WebhookAttemptView[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push({ id: a.id, attemptedAt: iso(Number(a.attempted_at)), durationMs: a.duration_ms, statusCode: a.status_code, error: a.error });
    byDelivery.set(a.delivery_id, list);
  }

  return deliveries.map((d) => ({
    id: d.id,
    messageId: webhookMessageId(d.id),
    sendId: d.send_id,
    position: d.position,
    url: d.url,
    status: d.status,
    // The contact's metadata sits 3 levels down (payload, data, contact).
    payload: parseStoredJson(d.payload, 3),
    nextAttemptAt: d.status === 'pending' ? iso(Number(d.next_attempt_at)) : null,
    lastStatusCode: d.last_status_code,
    lastError: d.last_error,
    createdAt: iso(Number(d.created_at)),
    updatedAt: iso(Number(d.updated_at)),
    attempts: byDelivery.get(d.id) ?? [],
  }));
}
