import { sql } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { ContactCondition } from '../contacts/contacts.admin.service.js';
import { parseFieldValue } from '../contacts/field-values.js';
import type { Criteria, FieldRefs } from './segment-criteria.js';

/**
 * The compiler of saved criteria to SQL: conditions on the contacts row `c` (the contact list
 * of the contacts module pages through them) and the count of a segment. segment-criteria.ts
 * checks criteria; this file only turns checked criteria into SQL.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** The event part of criteria as SQL terms on events `e` (without the contact). */
function eventTerms(engine: Engine, accountId: string, event: NonNullable<Criteria['event']>, now: number) {
  const since = now - event.withinDays * DAY_MS;
  const metadata = event.metadata ? sql` and ${metadataEquals(engine, event.metadata.key, event.metadata.value)}` : sql``;
  return sql`e.account_id = ${accountId} and e.type = ${event.type} and e.created_at >= ${since}${metadata}`;
}

/**
 * The SQL conditions on contacts `c` that select a segment, cheapest first (the engine checks
 * each contact against them in this order). Archived contacts are never part of a segment
 * (they are out of the contact list too). A field deleted since the segment was saved
 * matches no contact. With `withEvent: false` the event part is left out, for a caller that
 * joins the events itself (segmentCount on SQLite).
 */
export function criteriaConditions(
  engine: Engine,
  accountId: string,
  criteria: Criteria,
  fields: FieldRefs,
  now: number,
  withEvent = true,
): ContactCondition[] {
  const conditions: ContactCondition[] = [sql`c.archived = 0`];
  // The contact has the tag: the tag's contacts are read once (index contact_tags_account_tag)
  // and each contact is checked against them, never a seek per contact.
  for (const tag of criteria.tags ?? [])
    conditions.push(sql`c.id in (select contact_id from contact_tags where account_id = ${accountId} and tag = ${tag})`);
  for (const field of criteria.fields ?? []) {
    const ref = fields.get(field.name.toLowerCase());
    const parsed = ref && parseFieldValue(ref.type, field.value);
    // A seek on the primary key (contact_id, field_id); stored values are the JSON of the
    // stored form, so comparing the texts compares the values. The correlation on c.id keeps
    // it within the account.
    conditions.push(
      ref === undefined || parsed?.kind !== 'set'
        ? sql`1 = 0`
        : sql`exists (select 1 from contact_field_values v where v.contact_id = c.id and v.field_id = ${ref.id} and v.value = ${JSON.stringify(parsed.value)})`,
    );
  }
  // One seek per contact in events_account_type_contact_time (account_id, type, contact_id,
  // created_at): a page of a segment stops as soon as it is full.
  if (criteria.event && withEvent)
    conditions.push(
      sql`exists (select 1 from events e where ${eventTerms(engine, accountId, criteria.event, now)} and e.contact_id = c.id)`,
    );
  return conditions;
}

/**
 * How many contacts the criteria select. PostgreSQL plans the EXISTS of criteriaConditions as
 * a hash semi-join over the events in the window. SQLite has no hash joins: a seek per
 * contact costs more than reading the type's events once, in contact order from
 * events_account_type_contact_time (so GROUP BY needs no sorting), and looking each distinct
 * contact up by primary key. CROSS JOIN fixes that order: SQLite keeps no statistics to see
 * that an account's contacts are many.
 */
function segmentCount(engine: Engine, accountId: string, criteria: Criteria, fields: FieldRefs, now: number) {
  if (engine === 'sqlite' && criteria.event) {
    const rest = criteriaConditions(engine, accountId, criteria, fields, now, false);
    return sql<{ n: number }>`select count(*) as n
      from (select e.contact_id from events e where ${eventTerms(engine, accountId, criteria.event, now)} group by e.contact_id) m
      cross join contacts c
      where c.id = m.contact_id and c.account_id = ${accountId} and ${sql.join(rest, sql` and `)}`;
  }
  return sql<{ n: number }>`select count(*) as n from contacts c
    where c.account_id = ${accountId} and ${sql.join(criteriaConditions(engine, accountId, criteria, fields, now), sql` and `)}`;
}

// A JSON number as text, as a person would type it in the segment form.
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * One top-level metadata member of an event equals `value` as text, the same on both engines:
 * strings as they are, numbers in their JSON form, booleans as true/false. PostgreSQL's `->>`
 * gives exactly that text. SQLite's gives booleans as 1/0 and numbers as SQL numbers, so the
 * member's JSON type is consulted, only when the value could be a boolean or a number (it
 * costs a second look at the JSON). The SQLite path quotes the key, so any key works.
 */
function metadataEquals(engine: Engine, key: string, value: string) {
  if (engine === 'postgres') return sql`(e.metadata::json ->> ${key}) = ${value}`;
  const path = `$.${JSON.stringify(key)}`;
  if (value === 'true' || value === 'false') return sql`(json_type(e.metadata, ${path}) = ${value} or e.metadata ->> ${path} = ${value})`;
  if (NUMBER.test(value)) {
    return sql`(e.metadata ->> ${path} = ${value} or (json_type(e.metadata, ${path}) in ('integer', 'real') and cast(e.metadata ->> ${path} as text) = ${value}))`;
  }
  return sql`e.metadata ->> ${path} = ${value}`;
}

/** How many contacts the criteria select (segmentCount, run). */
export async function countSegmentContacts(
  db: Queryable,
  accountId: string,
  engine: Engine,
  criteria: Criteria,
  fields: FieldRefs,
  now: number,
): Promise<number> {
  const { rows } = await segmentCount(engine, accountId, criteria, fields, now).execute(kyselyOf(db));
  return Number(rows[0]?.n ?? 0);
}
