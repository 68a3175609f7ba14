import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { EventsTable } from '../../db/schema.js';

/** SQL of events; the account id comes first after the handle. */
export async function insertEvent(db: Queryable, accountId: string, event: Omit<EventsTable, 'account_id'>): Promise<void> {
  await kyselyOf(db)
    .insertInto('events')
    .values({ ...event, account_id: accountId })
    .execute();
}
