import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Campaign } from '../modules/campaigns/campaign.js';
import type { ContactProfile } from '../modules/contacts/contacts.service.js';
import type { MessagePreview, PreviewInput } from '../rendering/preview.js';
import type { TriggerData } from '../rendering/variables.js';

/** The account settings a delivery may need: the WhatsApp Cloud API's phone number id and token. */
export interface DeliveryAccount {
  id: string;
  whatsapp: { phoneNumberId: string; token: string } | null;
}

/** Everything a transport needs to deliver one send. */
export interface DeliveryRequest {
  /** `test`: a test send from the admin panel; the message says so (channels/email/render-request.ts). */
  send: { id: string; accountId: string; campaignId: string; contactId: string; attempts: number; test?: boolean };
  campaign: Campaign;
  contact: ContactProfile;
  /** The address chosen for this send: the primary email, or the primary phone (E.164). */
  to: string;
  account: DeliveryAccount;
  /** The `data` of the trigger call that made the send (`{{ trigger.* }}`); absent or null: none. */
  trigger?: TriggerData | null;
}

export interface DeliveryReceipt {
  /** SMTP message id, WhatsApp message id (wamid...), or the outbox row id. */
  providerMessageId: string | null;
  /** True when the far end accepted the message (SMTP 250, outbox stored); WhatsApp reports it later. */
  delivered: boolean;
}

/**
 * A delivery failure. Temporary ones (network, SMTP 4xx, HTTP 5xx/429) are retried with
 * backoff; permanent ones end the send as `error` with this message as its reason. The
 * renderers throw permanent ones too: a campaign that cannot make a message fails every time.
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly temporary: boolean,
    /**
     * The recipient's server refused the address itself for good (an SMTP 5yz reply to RCPT TO):
     * a bounce. The send ends in error and the address is suppressed (decisions.md, Email).
     */
    readonly addressRefused = false,
  ) {
    super(message);
  }
}

/** How a channel's messages leave this process: SMTP, the Cloud API, or the built-in outbox. */
export interface Transport {
  deliver(request: DeliveryRequest): Promise<DeliveryReceipt>;
  /** Closes pooled connections on shutdown. */
  close?(): Promise<void>;
  /**
   * Of these sends, claimed again, those the far end accepted before: noted in the transport's
   * journal, the outcome's write cut short by a crash (email over SMTP on its thread, SQLite:
   * db/acceptance-journal.ts). Absent: the transport keeps no journal.
   */
  deliveredBefore?(sendIds: string[]): Map<string, DeliveryReceipt & { to: string }>;
  /** A delivered send's outcome is written: the journal can forget it. */
  recorded?(sendId: string): void;
}

/** What a transport is built from, once per process. */
export interface TransportContext {
  config: Config;
  db: Db;
  logger: Logger;
}

/**
 * Everything Herald knows about one channel, in one place (see registry.ts). Rules the
 * trigger, the dispatcher, the campaign settings and the admin preview apply read from here,
 * so no code anywhere asks "is this email or WhatsApp?".
 */
export interface ChannelDefinition {
  /** The channel's name as people read it, in error messages ("WhatsApp campaigns need the pro plan"). */
  label: string;
  /** Which of the contact's addresses a send goes to: its primary (first) email or phone. */
  address: 'email' | 'phone';
  /** The reason of a send ended because the contact has no such address. */
  missingAddressReason: string;
  /** What a campaign lacks before it can be activated or test-sent, by name ([] when complete). */
  missingForActivation(campaign: Pick<Campaign, 'email' | 'whatsapp'>): string[];
  /** The plan an account needs to activate a campaign on this channel (decisions.md, Plans); null: any. */
  planToActivate: 'pro' | null;
  /** Whether a send queues the campaign's webhook deliveries (webhooks are for email campaigns only). */
  webhooks: boolean;
  /** Reads the account settings a delivery needs when a send goes out; absent when it needs none. */
  deliveryAccount?(db: Db, config: Pick<Config, 'secret'>, accountId: string): Promise<DeliveryAccount['whatsapp']>;
  /** The message as the admin preview shows it: rendered, untracked, nothing stored or sent. */
  preview(input: PreviewInput): Promise<MessagePreview>;
  /** This process's transport for the channel (SMTP or the outbox, the Cloud API or the outbox). */
  createTransport(context: TransportContext): Transport;
}
