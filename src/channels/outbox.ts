import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { OutboxMessagesTable } from '../db/schema.js';
import { newId } from '../ids.js';
import { type OutboxItem, outboxItem } from '../rendering/outbox-view.js';
import type { DeliveryRequest } from './channel.js';
import { insertOutboxMessage, selectOutboxMessages } from './outbox.repo.js';

export type { OutboxItem } from '../rendering/outbox-view.js';

/** What an outbox transport needs: the signing settings of the links it renders. */
export type OutboxConfig = Pick<Config, 'publicUrl' | 'secret'>;

/** The columns a channel's outbox transport fills: the rendered message. */
export type OutboxContent = Pick<OutboxMessagesTable, 'channel' | 'from_address' | 'subject' | 'html' | 'text' | 'headers' | 'payload'>;

/**
 * The built-in outbox (decisions.md): with no SMTP server or WhatsApp account configured, the
 * message is rendered exactly as it would be sent and kept in `outbox_messages`, so the whole
 * flow works on a fresh machine and the admin panel can show what went out. Not a channel: each
 * channel folder has its outbox transport (email/email-outbox.ts ...), which stores here.
 */
export async function storeInOutbox(db: Db, request: DeliveryRequest, content: OutboxContent): Promise<string> {
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
