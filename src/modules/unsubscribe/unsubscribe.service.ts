import type { Db } from '../../db/connect.js';

/** Who an unsubscribe link speaks for: the send names the account, the contact and the campaign. */
export interface UnsubscribeTarget {
  sendId: string;
  accountId: string;
  contactId: string;
  campaignId: string;
  optedOut: boolean;
}

export async function findUnsubscribeTarget(db: Db, sendId: string): Promise<UnsubscribeTarget | undefined> {
  const row = await db.kysely
    .selectFrom('sends')
    .innerJoin('contacts', (join) => join.onRef('contacts.id', '=', 'sends.contact_id').onRef('contacts.account_id', '=', 'sends.account_id'))
    .select(['sends.id', 'sends.account_id', 'sends.contact_id', 'sends.campaign_id', 'contacts.opted_out'])
    .where('sends.id', '=', sendId)
    .executeTakeFirst();
  if (!row) return undefined;
  return { sendId: row.id, accountId: row.account_id, contactId: row.contact_id, campaignId: row.campaign_id, optedOut: row.opted_out === 1 };
}

/**
 * Opts the send's contact out. Conditional on `opted_out = 0`, so a repeat (a mailbox
 * provider's one-click POST and then the recipient's own click) changes nothing more, not
 * even updated_at. Returns false when the send does not exist.
 */
export async function optOutBySend(db: Db, sendId: string, now = Date.now()): Promise<boolean> {
  const target = await findUnsubscribeTarget(db, sendId);
  if (!target) return false;
  await db.kysely
    .updateTable('contacts')
    .set({ opted_out: 1, updated_at: now })
    .where('account_id', '=', target.accountId)
    .where('id', '=', target.contactId)
    .where('opted_out', '=', 0)
    .execute();
  return true;
}
