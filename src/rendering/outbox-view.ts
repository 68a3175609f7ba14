import type { Config } from '../config.js';
import type { Channel } from '../contract/constants.js';
import type { OutboxMessagesTable } from '../db/schema.js';
import { untrackHtml } from '../modules/tracking/email-links.js';
import { iso } from '../time.js';

/** One outbox message as the CLI and the admin panel show it. */
export interface OutboxItem {
  id: string;
  sendId: string;
  campaignId: string;
  channel: Channel;
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

/**
 * One outbox message as the panel shows it: the HTML untracked (no open pixel, original links),
 * since looking at a sent message in the panel must never count an open or a click
 * (decisions.md, Admin panel).
 */
export function outboxMessageView(row: OutboxMessagesTable, config: Pick<Config, 'publicUrl' | 'secret'>): OutboxItem {
  const item = outboxItem(row);
  return { ...item, html: item.html === null ? null : untrackHtml(item.html, config) };
}
