import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { OutboxMessagesTable } from '../../db/schema.js';
import { newId } from '../../ids.js';
import { emailTracking } from '../../modules/tracking/email-links.js';
import { unsubscribeUrl } from '../../modules/unsubscribe/unsubscribe-token.js';
import { iso } from '../../time.js';
import type { Channel, DeliveryReceipt, DeliveryRequest } from './channel.js';
import { renderEmail } from './email-render.js';
import { buildWhatsAppMessage } from './whatsapp.js';

type SigningConfig = Pick<Config, 'publicUrl' | 'secret'>;

/**
 * The built-in outbox (decisions.md): with no SMTP server or WhatsApp account configured, the
 * message is rendered exactly as it would be sent and kept in `outbox_messages`, so the whole
 * flow works on a fresh machine and the admin panel can show what went out.
 */
export function createEmailOutboxChannel(config: SigningConfig, db: Db, logger: Logger): Channel {
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

export function createWhatsAppOutboxChannel(config: SigningConfig, db: Db, logger: Logger): Channel {
  return {
    async deliver(request: DeliveryRequest): Promise<DeliveryReceipt> {
      const message = await buildWhatsAppMessage(request, unsubscribeUrl(config, request.send.id));
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
  await db.kysely
    .insertInto('outbox_messages')
    .values({
      id,
      account_id: request.send.accountId,
      send_id: request.send.id,
      campaign_id: request.send.campaignId,
      to_address: request.to,
      created_at: Date.now(),
      ...content,
    })
    .execute();
  return id;
}

/** One outbox message as the CLI and the admin panel show it. */
export interface OutboxItem {
  id: string;
  sendId: string;
  campaignId: string;
  channel: 'email' | 'whatsapp';
  to: string;
  from: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  /** WhatsApp: the Cloud API request body. */
  payload: unknown;
  createdAt: string;
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
  let query = db.kysely.selectFrom('outbox_messages').selectAll().where('account_id', '=', accountId);
  if (options.campaignId !== undefined) query = query.where('campaign_id', '=', options.campaignId);
  // The id makes the order stable; within one millisecond it is arbitrary (ulid is not monotonic).
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return { items: rows.map(outboxItem) };
}

/** An outbox row as the CLI and the admin panel show it: bodies, headers and payload parsed. */
export function outboxItem(row: OutboxMessagesTable): OutboxItem {
  return {
    id: row.id,
    sendId: row.send_id,
    campaignId: row.campaign_id,
    channel: row.channel,
    to: row.to_address,
    from: row.from_address,
    subject: row.subject,
    html: row.html,
    text: row.text,
    headers: JSON.parse(row.headers) as Record<string, string>,
    payload: row.payload === null ? null : (JSON.parse(row.payload) as unknown),
    createdAt: iso(Number(row.created_at)),
  };
}
