import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { EngagedSend } from '../tracking/tracking.service.js';

/** SQL of the WhatsApp callbacks, scoped to the account whose app secret verified the callback. */

export interface WhatsAppSend extends EngagedSend {
  status: string;
  deliveredAt: number | null;
}

/** The account's WhatsApp send the Cloud API gave this wamid; `lock` (PostgreSQL) holds its row until commit. */
export async function findSendByWamid(db: Queryable, accountId: string, wamid: string, lock: boolean): Promise<WhatsAppSend | undefined> {
  let query = kyselyOf(db)
    .selectFrom('sends')
    .select(['id', 'account_id', 'campaign_id', 'contact_id', 'test', 'status', 'delivered_at'])
    .where('provider_message_id', '=', wamid)
    .where('account_id', '=', accountId)
    .where('channel', '=', 'whatsapp');
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    accountId: row.account_id,
    campaignId: row.campaign_id,
    contactId: row.contact_id,
    test: row.test === 1,
    status: row.status,
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
  };
}

/** Delivered once: the first receipt's time stays (a read implies delivery and may come first). */
export async function markDelivered(db: Queryable, accountId: string, sendId: string, at: number): Promise<void> {
  await writeOn(db, (q) =>
    q
      .updateTable('sends')
      .set({ delivered_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', sendId)
      .where('status', '=', 'sent')
      .where('delivered_at', 'is', null)
      .execute(),
  );
}

/** A send the API accepted but could not deliver ends in error (only from `sent`: a repeat changes nothing). */
export async function markFailed(db: Queryable, accountId: string, sendId: string, reason: string, now: number): Promise<void> {
  await writeOn(db, (q) =>
    q
      .updateTable('sends')
      .set({ status: 'error', reason, updated_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', sendId)
      .where('status', '=', 'sent')
      .execute(),
  );
}
