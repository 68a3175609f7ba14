import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { EventsTable } from '../../db/schema.js';

/** A contact id by its id (leadId) or by a linked visitor id; undefined when not in this account. */
export async function findContactForEvent(db: Queryable, accountId: string, by: { id: string } | { tracker: string }): Promise<string | undefined> {
  if ('id' in by) {
    const row = await kyselyOf(db).selectFrom('contacts').select('id').where('account_id', '=', accountId).where('id', '=', by.id).executeTakeFirst();
    return row?.id;
  }
  const row = await kyselyOf(db).selectFrom('trackers').select('contact_id').where('account_id', '=', accountId).where('tracker', '=', by.tracker).executeTakeFirst();
  return row?.contact_id;
}

export async function insertEvent(db: Queryable, accountId: string, event: Omit<EventsTable, 'account_id'>): Promise<void> {
  await kyselyOf(db).insertInto('events').values({ ...event, account_id: accountId }).execute();
}
