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

/** The account's name and unsubscribe page settings (JSON text or null), to brand the page. */
export async function findPageSettings(db: Queryable, accountId: string) {
  return kyselyOf(db).selectFrom('accounts').select(['name', 'unsubscribe_page']).where('id', '=', accountId).executeTakeFirst();
}
