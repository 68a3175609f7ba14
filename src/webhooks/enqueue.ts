import type { Tx } from '../db/transaction.js';
import { newId } from '../ids.js';
import { iso } from '../time.js';
import { insertDeliveries } from './deliveries.repo.js';

/** The contact as `herald contact show` presents it, reduced to what a webhook carries. */
export interface WebhookContact {
  id: string;
  name: string;
  emails: string[];
  phones: string[];
  tags: string[];
  /** Keyed by custom field name, as defined. */
  fields: Record<string, unknown>;
  /** Keyed by KPI id. */
  kpis: Record<string, number>;
  metadata: Record<string, unknown>;
}

export interface EnqueueWebhooksInput {
  accountId: string;
  campaignId: string;
  sendId: string;
  /** The campaign's webhook URLs, in their configured order (up to 3). */
  urls: string[];
  contact: WebhookContact;
  /** The trigger call's `data`: the payload's `data.trigger`, left out when absent or null. */
  trigger?: Record<string, unknown> | null;
  /** When the send reached `sent` (epoch ms): the payload's timestamp and the first due time. */
  now: number;
}

/**
 * The Standard Webhooks message id (`webhook-id`) of a delivery. It is derived from the
 * delivery id rather than stored, so it is the same on every attempt (receivers deduplicate
 * on it) and needs no column of its own.
 */
export function webhookMessageId(deliveryId: string): string {
  return `msg_${deliveryId.slice(deliveryId.indexOf('_') + 1)}`;
}

/** The exact body of decisions.md (Outbound webhooks); key order is fixed so the bytes are stable. */
export function campaignSentPayload(input: Pick<EnqueueWebhooksInput, 'campaignId' | 'sendId' | 'contact' | 'trigger' | 'now'>): string {
  const c = input.contact;
  // `trigger` only when the call carried data: a send without it keeps the payload it always had.
  const trigger = input.trigger == null ? {} : { trigger: input.trigger };
  return JSON.stringify({
    type: 'campaign.sent',
    timestamp: iso(input.now),
    data: {
      campaignId: input.campaignId,
      sendId: input.sendId,
      // Picked one by one: a ContactProfile passed in carries notes, trackers ... that a webhook must not.
      contact: {
        id: c.id,
        name: c.name,
        emails: c.emails,
        phones: c.phones,
        tags: c.tags,
        fields: c.fields,
        kpis: c.kpis,
        metadata: c.metadata,
      },
      ...trigger,
    },
  });
}

/**
 * Queues one delivery per URL. Called inside the transaction that marks the send `sent`, so a
 * webhook is written exactly when the send is: never lost, and (unique send_id, position)
 * never doubled. A second call for the same send inserts nothing instead of failing, so it
 * cannot abort the caller's transaction.
 */
export async function enqueueWebhookDeliveries(tx: Tx, input: EnqueueWebhooksInput): Promise<void> {
  if (input.urls.length === 0) return;
  // One body for all URLs: the payload is the same event, whoever receives it.
  const payload = campaignSentPayload(input);
  await insertDeliveries(
    tx,
    input.urls.map((url, position) => ({
      id: newId('whd'),
      account_id: input.accountId,
      campaign_id: input.campaignId,
      send_id: input.sendId,
      position,
      url,
      payload,
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: input.now,
      lease_until: null,
      last_status_code: null,
      last_error: null,
      created_at: input.now,
      updated_at: input.now,
    })),
  );
}
