import { type CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import { StatementShapes } from '../../db/constant-statements.js';
import { type Queryable, writeOn } from '../../db/queryable.js';
import type { Database, EventsTable } from '../../db/schema.js';

// SQL of events; the account id comes first after the handle.

/** Many events of one account in one statement (a batch writes its rows in chunks of this). */
export async function insertEvents(db: Queryable, accountId: string, events: Omit<EventsTable, 'account_id'>[]): Promise<void> {
  if (events.length === 0) return;
  await writeOn(db, (q) => q.executeQuery(insertEventsQuery(q, accountId, events)));
}

/** insertEvents' statement, not run: for a caller that sends several at once (db/pipeline.ts). */
export function insertEventsQuery(q: Kysely<Database>, accountId: string, events: Omit<EventsTable, 'account_id'>[]): CompiledQuery {
  return q
    .insertInto('events')
    .values(events.map((event) => ({ ...event, account_id: accountId })))
    .compile();
}

/** How an event names its contact: its id (leadId) or a linked visitor id. */
export type EventLead = { id: string } | { tracker: string };

/**
 * One event for the contact `lead` names, looked up and inserted in ONE statement (issue 12):
 * answers the contact's id, or undefined when the look-up found none and nothing was inserted.
 * `contactSelect` is that look-up (the contacts module's), a select of zero or one row with its
 * `contact_id`, whose text depends on how the lead is named alone: the statement is compiled
 * once per kind (db/constant-statements.ts). Every value is cast to its column's type: in an
 * INSERT ... SELECT, PostgreSQL would otherwise take an untyped parameter for text.
 */
export async function insertEventForContact(
  db: Queryable,
  accountId: string,
  event: Omit<EventsTable, 'account_id' | 'contact_id'>,
  lead: EventLead,
  contactSelect: (accountId: string, lead: EventLead) => RawBuilder<{ contact_id: string }>,
): Promise<string | undefined> {
  const [kind, value] = 'id' in lead ? ['id', lead.id] : ['tracker', lead.tracker];
  const values = { event, accountId, lead: value };
  const { rows } = await writeOn(db, (q) =>
    STATEMENTS.run(q, kind, values, (bind) => {
      const contact = contactSelect(bind('accountId') as string, { [kind]: bind('lead') } as EventLead);
      return sql<{ contact_id: string }>`
      insert into events (id, account_id, contact_id, type, value, metadata, url, created_at)
      select cast(${bind('event.id')} as text), cast(${bind('accountId')} as text), named.contact_id, cast(${bind('event.type')} as text),
             cast(${bind('event.value')} as text), cast(${bind('event.metadata')} as text), cast(${bind('event.url')} as text), cast(${bind('event.created_at')} as bigint)
        from (${contact}) named
      returning contact_id`;
    }),
  );
  return rows[0]?.contact_id;
}

const STATEMENTS = new StatementShapes();
