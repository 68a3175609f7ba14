import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { EngagedSend } from '../tracking/tracking.service.js';

/**
 * SQL of the WhatsApp callbacks. Two look-ups cannot start from an account id, because finding
 * the account is their purpose: by the phone number id a callback names (its signature is then
 * checked with that account's app secret), and by the handshake's verify token. Everything
 * after that is scoped to the account found.
 */
type Q = Kysely<Database>;

export async function accountIdsByPhoneNumberIds(q: Q, phoneNumberIds: string[]): Promise<{ accountId: string; phoneNumberId: string }[]> {
  if (phoneNumberIds.length === 0) return [];
  const rows = await q
    .selectFrom('accounts')
    .select(['id', 'whatsapp_phone_number_id'])
    .where('whatsapp_phone_number_id', 'in', phoneNumberIds)
    .where('whatsapp_app_secret', 'is not', null)
    .execute();
  return rows.map((r) => ({ accountId: r.id, phoneNumberId: r.whatsapp_phone_number_id! }));
}

export async function accountIdByVerifyTokenHash(q: Q, hash: string): Promise<string | undefined> {
  const row = await q.selectFrom('accounts').select('id').where('whatsapp_verify_token_hash', '=', hash).executeTakeFirst();
  return row?.id;
}

export interface WhatsAppSend extends EngagedSend {
  status: string;
  deliveredAt: number | null;
}

/** The account's WhatsApp send the Cloud API gave this wamid; `lock` (PostgreSQL) holds its row until commit. */
export async function findSendByWamid(q: Q, accountId: string, wamid: string, lock: boolean): Promise<WhatsAppSend | undefined> {
  let query = q
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
export async function markDelivered(q: Q, accountId: string, sendId: string, at: number): Promise<void> {
  await q
    .updateTable('sends')
    .set({ delivered_at: at })
    .where('account_id', '=', accountId)
    .where('id', '=', sendId)
    .where('status', '=', 'sent')
    .where('delivered_at', 'is', null)
    .execute();
}

/** A send the API accepted but could not deliver ends in error (only from `sent`: a repeat changes nothing). */
export async function markFailed(q: Q, accountId: string, sendId: string, reason: string, now: number): Promise<void> {
  await q
    .updateTable('sends')
    .set({ status: 'error', reason, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', sendId)
    .where('status', '=', 'sent')
    .execute();
}

/** Conditional on not opted out yet, so a repeated STOP changes nothing more, not even updated_at. */
export async function optOutContact(q: Q, accountId: string, contactId: string, now: number): Promise<boolean> {
  const result = await q
    .updateTable('contacts')
    .set({ opted_out: 1, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', contactId)
    .where('opted_out', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
