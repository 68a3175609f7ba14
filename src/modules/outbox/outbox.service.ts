import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { AppError } from '../../errors.js';
import { decodeCursor, pageOf } from '../../http/paging.js';
import { type OutboxItem, outboxMessageView } from '../../rendering/outbox-view.js';
import { iso } from '../../time.js';
import * as repo from './outbox.repo.js';

/**
 * The built-in outbox in the panel: a keyset-paged list (listOutbox of the channel has no
 * cursor, and the list leaves out the bodies), and one message in full.
 */
export async function pageOutbox(db: Db, accountId: string, options: { campaignId?: string; limit: number; cursor?: string }) {
  const rows = await repo.selectOutboxPage(db, accountId, {
    campaignId: options.campaignId,
    limit: options.limit,
    after: decodeCursor(options.cursor),
  });
  const { items, nextCursor } = pageOf(rows, options.limit, (r) => ({ at: Number(r.created_at), id: r.id }));
  return {
    items: items.map((r) => ({
      id: r.id,
      sendId: r.send_id,
      campaignId: r.campaign_id,
      channel: r.channel,
      to: r.to_address,
      from: r.from_address,
      subject: r.subject,
      createdAt: iso(Number(r.created_at)),
    })),
    nextCursor,
  };
}

/**
 * One outbox message with its bodies, headers and WhatsApp payload, as the panel shows it; another
 * account's id is 404. The HTML is untracked (no open pixel, original links): looking at a sent
 * message in the panel must never count an open or a click (decisions.md, Admin panel).
 */
export async function getOutboxMessage(
  db: Db,
  config: Pick<Config, 'publicUrl' | 'secret'>,
  accountId: string,
  id: string,
): Promise<OutboxItem> {
  const row = await repo.selectOutboxMessage(db, accountId, id);
  if (!row) throw new AppError('OUTBOX_MESSAGE_NOT_FOUND');
  return outboxMessageView(row, config);
}
