import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { EventsTable } from '../../db/schema.js';

/** SQL of events; the account id comes first after the handle. */
export async function insertEvent(db: Queryable, accountId: string, event: Omit<EventsTable, 'account_id'>): Promise<void> {
  await kyselyOf(db)
    .insertInto('events')
    .values({ ...event, account_id: accountId })
    .execute();
}

/** Many events of one account in one statement (a batch writes its rows in chunks of this). */
export async function insertEvents(db: Queryable, accountId: string, events: Omit<EventsTable, 'account_id'>[]): Promise<void> {
  if (events.length === 0) return;
  await kyselyOf(db)
    .insertInto('events')
    .values(events.map((event) => ({ ...event, account_id: accountId })))
    .execute();
}
