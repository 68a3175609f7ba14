import { kyselyOf, type Queryable } from '../../db/queryable.js';

/**
 * SQL of a contact's activity feed: each source reads at most `limit` of the contact's rows
 * older than `before`, newest first (the id breaks ties). The account id is part of every WHERE.
 */
export async function selectEvents(db: Queryable, accountId: string, contactId: string, before: number, limit: number) {
  return kyselyOf(db)
    .selectFrom('events')
    .select(['id', 'type', 'value', 'metadata', 'url', 'created_at'])
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .where('created_at', '<', before)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function selectNotes(db: Queryable, accountId: string, contactId: string, before: number, limit: number) {
  return kyselyOf(db)
    .selectFrom('contact_notes')
    .select(['id', 'text', 'created_by', 'created_at'])
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .where('created_at', '<', before)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function selectSends(db: Queryable, accountId: string, contactId: string, before: number, limit: number) {
  return kyselyOf(db)
    .selectFrom('sends')
    .select(['id', 'campaign_id', 'status', 'created_at'])
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .where('created_at', '<', before)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function selectEngagements(db: Queryable, accountId: string, contactId: string, before: number, limit: number) {
  return kyselyOf(db)
    .selectFrom('engagements')
    .select(['id', 'kind', 'send_id', 'campaign_id', 'url', 'created_at'])
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .where('created_at', '<', before)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Which of these sends are admin panel test sends. By the primary key alone, the account and the
 * flag compared on the rows found: with `account_id = ?` in the statement, SQLite (no statistics)
 * read the account's whole range of an index that starts with account_id instead (as the events
 * batch's look-up by contact ids did, contacts.repo.ts contactsByIdsQuery).
 */
export async function selectTestSendIds(db: Queryable, accountId: string, sendIds: string[]): Promise<string[]> {
  if (sendIds.length === 0) return []; // an empty IN list is not SQL
  const rows = await sendsByIdsQuery(db, sendIds).execute();
  return rows.filter((r) => r.account_id === accountId && r.test === 1).map((r) => r.id);
}

/** The sends of these ids, by the primary key alone (selectTestSendIds). */
export function sendsByIdsQuery(db: Queryable, sendIds: string[]) {
  return kyselyOf(db).selectFrom('sends').select(['id', 'account_id', 'test']).where('id', 'in', sendIds);
}
