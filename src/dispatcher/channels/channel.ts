import type { Campaign } from '../../modules/campaigns/campaign.js';
import type { ContactProfile } from '../../modules/contacts/contacts.service.js';

/** Everything a channel needs to deliver one send. */
export interface DeliveryRequest {
  send: { id: string; accountId: string; campaignId: string; contactId: string; attempts: number };
  campaign: Campaign;
  contact: ContactProfile;
  /** The address chosen for this send: the primary email, or the primary phone (E.164). */
  to: string;
  account: { id: string; whatsapp: { phoneNumberId: string; token: string } | null };
}

export interface DeliveryReceipt {
  /** SMTP message id, WhatsApp message id (wamid...), or the outbox row id. */
  providerMessageId: string | null;
  /** True when the far end accepted the message (SMTP 250, outbox stored); WhatsApp reports it later. */
  delivered: boolean;
}

/**
 * A delivery failure. Temporary ones (network, SMTP 4xx, HTTP 5xx/429) are retried with
 * backoff; permanent ones end the send as `error` with this message as its reason.
 */
export class DeliveryError extends Error {
  constructor(message: string, readonly temporary: boolean) {
    super(message);
  }
}

export interface Channel {
  deliver(request: DeliveryRequest): Promise<DeliveryReceipt>;
  /** Closes pooled connections on shutdown. */
  close?(): Promise<void>;
}
