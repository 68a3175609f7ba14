import { sql } from 'kysely';
import type { Db, Engine } from '../../db/connect.js';
import { AppError, type Problem } from '../../errors.js';
import type { FieldType } from '../../contract/constants.js';
import { parseFieldValue } from '../contacts/field-values.js';
import { normalizeTag } from '../contacts/normalize.js';
import type { ContactCondition } from '../admin/contacts/contact-list.js';
import { tagCondition } from '../admin/contacts/contact-search.js';
import type { CriteriaInput } from './segments.schemas.js';
import { fieldsByName } from './segments.repo.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Criteria as saved: tags in stored form, field names as defined, field values as the user
 * wrote them (so the form shows them back unchanged); each value is read with its field's
 * rules whenever the segment is evaluated.
 */
export interface Criteria {
  event?: { type: string; withinDays: number; metadata?: { key: string; value: string } };
  tags?: string[];
  fields?: { name: string; value: unknown }[];
}

/** The custom fields criteria name, keyed by lowercased name (how contact writes match them). */
export type FieldRefs = Map<string, { id: string; name: string; type: FieldType }>;

/**
 * Checks criteria against the account's definitions and puts them in saved form. A tag is
 * compared as the API stores it ("Black Friday" finds black-friday); a field value must be
 * valid for its field's type under the rules of contact writes (so "12.50" finds a Number
 * field written as 12.5). Every problem is reported at once, with its path in the request body.
 */
export async function normalizeCriteria(db: Db, accountId: string, input: CriteriaInput, base = '/criteria'): Promise<Criteria> {
  const problems: Problem[] = [];
  const criteria: Criteria = {};
  if (input.event) {
    criteria.event = { type: input.event.type, withinDays: input.event.withinDays };
    if (input.event.metadata) criteria.event.metadata = { ...input.event.metadata };
  }
  if (input.tags) {
    const tags = [...new Set(input.tags.map(normalizeTag))];
    input.tags.forEach((tag, i) => normalizeTag(tag) === '' && problems.push({ path: `${base}/tags/${i}`, message: 'a tag needs at least one letter or digit' }));
    criteria.tags = tags.filter((t) => t !== '');
  }
  if (input.fields) {
    const byKey = await fieldsByName(db.kysely, accountId, input.fields.map((f) => f.name.trim()));
    criteria.fields = [];
    input.fields.forEach((entry, i) => {
      const definition = byKey.get(entry.name.trim().toLowerCase());
      if (!definition) return problems.push({ path: `${base}/fields/${i}/name`, message: `unknown custom field '${entry.name}'` });
      const parsed = parseFieldValue(definition.type, entry.value);
      if (parsed.kind === 'clear') return problems.push({ path: `${base}/fields/${i}/value`, message: 'a value is required' });
      if (parsed.kind === 'invalid') return problems.push({ path: `${base}/fields/${i}/value`, message: `value of custom field '${definition.name}' ${parsed.message}` });
      criteria.fields!.push({ name: definition.name, value: typeof entry.value === 'string' ? entry.value.trim() : entry.value });
    });
  }
  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
  return criteria;
}

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
export function criteriaConditions(engine: Engine, accountId: string, criteria: Criteria, fields: FieldRefs, now: number, withEvent = true): ContactCondition[] {
  const conditions: ContactCondition[] = [sql`c.archived = 0`];
  for (const tag of criteria.tags ?? []) conditions.push(tagCondition(accountId, tag));
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
  if (criteria.event && withEvent) conditions.push(sql`exists (select 1 from events e where ${eventTerms(engine, accountId, criteria.event, now)} and e.contact_id = c.id)`);
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
export function segmentCount(engine: Engine, accountId: string, criteria: Criteria, fields: FieldRefs, now: number) {
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
