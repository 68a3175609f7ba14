import type { Kysely } from 'kysely';
import type { Database, EventsTable } from '../../db/schema.js';

/** A contact id by its id (leadId) or by a linked visitor id; undefined when not in this account. */
export async function findContactForEvent(q: Kysely<Database>, accountId: string, by: { id: string } | { tracker: string }): Promise<string | undefined> {
  if ('id' in by) {
    const row = await q.selectFrom('contacts').select('id').where('account_id', '=', accountId).where('id', '=', by.id).executeTakeFirst();
    return row?.id;
  }
  const row = await q.selectFrom('trackers').select('contact_id').where('account_id', '=', accountId).where('tracker', '=', by.tracker).executeTakeFirst();
  return row?.contact_id;
}

export async function insertEvent(q: Kysely<Database>, event: EventsTable): Promise<void> {
  await q.insertInto('events').values(event).execute();
}
