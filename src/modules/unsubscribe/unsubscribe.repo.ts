import { sql } from 'kysely';
import { kyselyOf, type Queryable } from '../../db/queryable.js';

/**
 * SQL of unsubscribe links. The look-up starts from the send id alone: the link's signed token
 * is the authority, and the send row says which account and contact it speaks for.
 */
export async function findSendWithContact(db: Queryable, sendId: string) {
  return kyselyOf(db)
    .selectFrom('sends')
    .innerJoin('contacts', (join) =>
      join.onRef('contacts.id', '=', 'sends.contact_id').onRef('contacts.account_id', '=', 'sends.account_id'),
    )
    .select(['sends.id', 'sends.account_id', 'sends.contact_id', 'sends.campaign_id', 'sends.test', 'sends.test_to', 'contacts.opted_out'])
    .where('sends.id', '=', sendId)
    .executeTakeFirst();
}

/** Conditional on `opted_out = 0`: a repeat changes nothing, not even updated_at. True when it opted the contact out. */
export async function optOutContact(db: Queryable, accountId: string, contactId: string, now: number): Promise<boolean> {
  const result = await kyselyOf(db)
    .updateTable('contacts')
    // A new version: a trigger that read the contact before this opt-out reads it again (write-unit.ts).
    .set({ opted_out: 1, updated_at: now, version: sql`version + 1` })
    .where('account_id', '=', accountId)
    .where('id', '=', contactId)
    .where('opted_out', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The account's name and unsubscribe page settings (JSON text or null), to brand the page. */
export async function findPageSettings(db: Queryable, accountId: string) {
  return kyselyOf(db).selectFrom('accounts').select(['name', 'unsubscribe_page']).where('id', '=', accountId).executeTakeFirst();
}
