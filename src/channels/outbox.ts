import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { OutboxMessagesTable } from '../db/schema.js';
import { newId } from '../ids.js';
import { emailTracking } from '../modules/tracking/email-links.js';
import { unsubscribeUrl } from '../modules/unsubscribe/unsubscribe-token.js';
import { renderEmail } from '../rendering/email.js';
import { outboxItem, type OutboxItem } from '../rendering/outbox-view.js';
import { renderWhatsAppMessage } from '../rendering/whatsapp.js';
import type { DeliveryReceipt, DeliveryRequest, Transport } from './channel.js';
import { insertOutboxMessage, selectOutboxMessages } from './outbox.repo.js';

export type { OutboxItem } from '../rendering/outbox-view.js';

type SigningConfig = Pick<Config, 'publicUrl' | 'secret'>;

/**
 * The built-in outbox (decisions.md): with no SMTP server or WhatsApp account configured, the
 * message is rendered exactly as it would be sent and kept in `outbox_messages`, so the whole
 * flow works on a fresh machine and the admin panel can show what went out. One transport per
 * channel, sharing the store; not a channel of its own.
 */
export function createEmailOutboxTransport(config: SigningConfig, db: Db, logger: Logger): Transport {
  return {
    async deliver(request: DeliveryRequest): Promise<DeliveryReceipt> {
      const email = await renderEmail({
        campaign: request.campaign,
        contact: request.contact,
        to: request.to,
        sendId: request.send.id,
        unsubscribeUrl: unsubscribeUrl(config, request.send.id),
        tracking: emailTracking(config, request.send.id),
      });
      const id = await store(db, request, {
        channel: 'email',
        from_address: email.from,
        subject: email.subject,
        html: email.html,
        text: email.text,
        headers: JSON.stringify({ 'Message-ID': email.messageId, ...email.headers }),
        payload: null,
      });
      logger.debug({ sendId: request.send.id, outboxId: id }, 'email kept in outbox');
      return { providerMessageId: id, delivered: true };
    },
  };
}

export function createWhatsAppOutboxTransport(config: SigningConfig, db: Db, logger: Logger): Transport {
  return {
    async deliver(request: DeliveryRequest): Promise<DeliveryReceipt> {
      const message = await renderWhatsAppMessage({ ...request, unsubscribeUrl: unsubscribeUrl(config, request.send.id) });
      const id = await store(db, request, {
        channel: 'whatsapp',
        from_address: null,
        subject: null,
        html: null,
        text: null,
        headers: '{}',
        payload: JSON.stringify(message),
      });
      logger.debug({ sendId: request.send.id, outboxId: id }, 'whatsapp message kept in outbox');
      return { providerMessageId: id, delivered: true };
    },
  };
}

type Content = Pick<OutboxMessagesTable, 'channel' | 'from_address' | 'subject' | 'html' | 'text' | 'headers' | 'payload'>;

async function store(db: Db, request: DeliveryRequest, content: Content): Promise<string> {
  const id = newId('obx');
  await insertOutboxMessage(db, request.send.accountId, {
    id,
    send_id: request.send.id,
    campaign_id: request.send.campaignId,
    to_address: request.to,
    created_at: Date.now(),
    ...content,
  });
  return id;
}

export const OUTBOX_DEFAULT_LIMIT = 50;
export const OUTBOX_MAX_LIMIT = 1000;

/** The account's outbox, newest first; optionally one campaign's messages only. */
export async function listOutbox(
  db: Db,
  accountId: string,
  options: { campaignId?: string; limit?: number } = {},
): Promise<{ items: OutboxItem[] }> {
  const limit = Math.min(Math.max(options.limit ?? OUTBOX_DEFAULT_LIMIT, 1), OUTBOX_MAX_LIMIT);
  const rows = await selectOutboxMessages(db, accountId, { campaignId: options.campaignId, limit });
  return { items: rows.map(outboxItem) };
}
