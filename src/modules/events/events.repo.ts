import { type RawBuilder, sql } from 'kysely';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { EventsTable } from '../../db/schema.js';

// SQL of events; the account id comes first after the handle.

/** Many events of one account in one statement (a batch writes its rows in chunks of this). */
export async function insertEvents(db: Queryable, accountId: string, events: Omit<EventsTable, 'account_id'>[]): Promise<void> {
  if (events.length === 0) return;
  await kyselyOf(db)
    .insertInto('events')
    .values(events.map((event) => ({ ...event, account_id: accountId })))
    .execute();
}

/**
 * One event for the contact `contact` selects (zero or one row with its `contact_id`), looked up
 * and inserted in ONE statement (issue 12): answers the contact's id, or undefined when the
 * select found none and nothing was inserted. Every value is cast to its column's type: in an
 * INSERT ... SELECT, PostgreSQL would otherwise take an untyped parameter for text.
 */
export async function insertEventForContact(
  db: Queryable,
  accountId: string,
  event: Omit<EventsTable, 'account_id' | 'contact_id'>,
  contact: RawBuilder<{ contact_id: string }>,
): Promise<string | undefined> {
  const { rows } = await sql<{ contact_id: string }>`
    insert into events (id, account_id, contact_id, type, value, metadata, url, created_at)
    select cast(${event.id} as text), cast(${accountId} as text), named.contact_id, cast(${event.type} as text),
           cast(${event.value} as text), cast(${event.metadata} as text), cast(${event.url} as text), cast(${event.created_at} as bigint)
      from (${contact}) named
    returning contact_id`.execute(kyselyOf(db));
  return rows[0]?.contact_id;
}
