import { type RawBuilder, sql } from 'kysely';
import type { Comparison } from '../../contract/admin/segments.js';
import type { Engine } from '../../db/connect.js';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { ContactCondition } from '../contacts/contacts.admin.service.js';
import { parseFieldValue } from '../contacts/field-values.js';
import { parseKpiIncrement } from '../contacts/kpi-values.js';
import type { Criteria, Definitions, Group } from './segment-criteria.js';

/**
 * The compiler of saved criteria to SQL: conditions on the contacts row `c` (the contact list
 * of the contacts module pages through them) and the count of a segment. segment-criteria.ts
 * checks criteria; this file only turns checked criteria into SQL, the same rules on both
 * engines (test/admin/segments-property.test.ts compares them with an in-memory evaluation).
 */

const DAY_MS = 24 * 60 * 60 * 1000;
type EventCondition = NonNullable<Group['events']>[number];
/** Contact ids of the account: one column, contact_id; `repeats`: an id may come more than once (a contact's events). */
interface IdSet {
  select: RawBuilder<unknown>;
  repeats?: true;
}
/**
 * A condition of a group: the contact is among a set's ids, or not among them; or NOBODY, for a
 * field or KPI deleted since the criteria were checked. Turned into conditions on each contact
 * (groupConditions) or into compound SELECTs of ids (sqliteSetCount).
 */
type IdCondition = { among: IdSet } | { notAmong: IdSet } | typeof NOBODY;
const NOBODY = Symbol('no contact');
const OPERATORS: Record<Exclude<Comparison, 'between'>, string> = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** The event condition as SQL terms on events `e` (without the contact). */
function eventTerms(engine: Engine, accountId: string, event: EventCondition, now: number) {
  const since = now - event.withinDays * DAY_MS;
  const metadata = event.metadata ? sql` and ${metadataEquals(engine, event.metadata.key, event.metadata.value)}` : sql``;
  return sql`e.account_id = ${accountId} and e.type = ${event.type} and e.created_at >= ${since}${metadata}`;
}

/** `expression op value`, or both bounds of `between` (inclusive). */
function compare(expression: RawBuilder<unknown>, op: Comparison, value: unknown, to: unknown) {
  if (op === 'between') return sql`${expression} >= ${value} and ${expression} <= ${to}`;
  return sql`${expression} ${sql.raw(OPERATORS[op])} ${value}`;
}

/**
 * A field condition. Stored values are the JSON of the stored form: `eq` compares the texts
 * (so it compares values), a Number is compared as a number, a Date (`"yyyy-mm-dd"`, quotes
 * included) as text in byte order, which is date order (`collate "C"`: PostgreSQL's default
 * collation may weigh punctuation differently). The field's matching contacts are read once,
 * as a set of ids, never a look-up per contact.
 */
function fieldCondition(
  engine: Engine,
  accountId: string,
  field: NonNullable<Group['fields']>[number],
  definitions: Definitions,
): IdCondition {
  const ref = definitions.fields.get(field.name.toLowerCase());
  if (!ref) return NOBODY;
  const op = field.op ?? 'eq';
  const stored = (raw: unknown) => {
    const parsed = parseFieldValue(ref.type, raw);
    if (parsed.kind !== 'set') return undefined;
    return op !== 'eq' && ref.type === 'number' ? parsed.value : JSON.stringify(parsed.value);
  };
  const value = stored(field.value);
  const to = op === 'between' ? stored(field.to) : null;
  if (value === undefined || to === undefined) return NOBODY;
  let expression = sql`v.value`;
  // PostgreSQL may test a scanned row's value before its field id: the CASE casts this field's values only.
  if (op !== 'eq' && ref.type === 'number')
    expression =
      engine === 'postgres' ? sql`cast(case when v.field_id = ${ref.id} then v.value end as double precision)` : sql`cast(v.value as real)`;
  else if (op !== 'eq' && engine === 'postgres') expression = sql`(v.value collate "C")`;
  return {
    among: {
      select: sql`select v.contact_id from contact_field_values v where v.account_id = ${accountId} and v.field_id = ${ref.id} and ${compare(expression, op, value, to)}`,
    },
  };
}

/**
 * A KPI condition on the contact's total in millionths, 0 when the contact has none (a KPI
 * is a sum: nothing added yet is 0). Whether 0 meets the comparison is known here, so the
 * condition needs no look-up per contact: when 0 fails it, the contacts among those with a
 * total that meets it; when 0 meets it, every contact not among those with a total that fails
 * it. Either reads the KPI's totals once.
 */
function kpiCondition(accountId: string, kpi: NonNullable<Group['kpis']>[number], definitions: Definitions): IdCondition {
  if (!definitions.kpis.has(kpi.id)) return NOBODY;
  const micros = (raw: unknown) => {
    const parsed = parseKpiIncrement(raw);
    return 'micros' in parsed ? parsed.micros : undefined;
  };
  const op = kpi.op;
  const value = micros(kpi.value);
  const to = op === 'between' ? micros(kpi.to) : null;
  if (value === undefined || to === undefined) return NOBODY;
  const zeroMeets = op === 'between' ? value <= 0 && 0 <= to! : MEETS[op](0, value);
  const totals = (test: RawBuilder<unknown>) =>
    sql`select k.contact_id from contact_kpis k where k.account_id = ${accountId} and k.kpi_id = ${kpi.id} and ${test}`;
  const meets = compare(sql`k.value_micros`, op, value, to);
  return zeroMeets ? { notAmong: { select: totals(sql`not (${meets})`) } } : { among: { select: totals(meets) } };
}

const MEETS: Record<Exclude<Comparison, 'between'>, (a: number, b: number) => boolean> = {
  eq: (a, b) => a === b,
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
};

/**
 * The contact is among the ids `select` gives (one column, contact_id, of this account): the
 * ids are read once, uncorrelated, and each contact is checked against them. SQLite builds a
 * temporary index of them once; PostgreSQL plans a semi-join (hash or merge) with them.
 */
function memberOf(select: RawBuilder<unknown>): ContactCondition {
  return sql`c.id in (${select})`;
}

/**
 * The contact is not among the ids `select` gives. SQLite: `not in`, a temporary index built
 * once (contact_id is never null, so `not in` means what it says). PostgreSQL plans `not in
 * (subquery)` as a hashed subplan that, when the ids do not fit work_mem, becomes a re-scan
 * per contact; `not exists` gives it an anti-join instead, hashed and spilling to disk if need
 * be. The subquery stays the same uncorrelated set but for the one join term.
 */
function notMemberOf(engine: Engine, select: RawBuilder<unknown>): ContactCondition {
  if (engine === 'sqlite') return sql`c.id not in (${select})`;
  return sql`not exists (select 1 from (${select}) x where x.contact_id = c.id)`;
}

/** The conditions of one group, cheapest first. */
function groupIdConditions(engine: Engine, accountId: string, group: Group, definitions: Definitions, now: number): IdCondition[] {
  const conditions: IdCondition[] = [];
  // The tag's contacts, read once (index contact_tags_account_tag), never a seek per contact.
  for (const tag of group.tags ?? [])
    conditions.push({ among: { select: sql`select contact_id from contact_tags where account_id = ${accountId} and tag = ${tag}` } });
  for (const field of group.fields ?? []) conditions.push(fieldCondition(engine, accountId, field, definitions));
  for (const kpi of group.kpis ?? []) conditions.push(kpiCondition(accountId, kpi, definitions));
  // The contacts with an event of the type in the window, read once from
  // events_account_type_contact_time (account_id, type, contact_id, created_at).
  for (const event of group.events ?? []) {
    const contacts: IdSet = {
      select: sql`select e.contact_id from events e where ${eventTerms(engine, accountId, event, now)}`,
      repeats: true,
    };
    conditions.push(event.negated ? { notAmong: contacts } : { among: contacts });
  }
  return conditions;
}

/**
 * The SQL conditions on contacts `c` of one group, checked on each contact in this order. A field
 * or KPI deleted since the criteria were checked matches no contact.
 */
function groupConditions(engine: Engine, accountId: string, group: Group, definitions: Definitions, now: number): ContactCondition[] {
  return groupIdConditions(engine, accountId, group, definitions, now).map((condition) => {
    if (condition === NOBODY) return sql`1 = 0`;
    return 'among' in condition ? memberOf(condition.among.select) : notMemberOf(engine, condition.notAmong.select);
  });
}

const all = (conditions: ContactCondition[]) => (conditions.length === 0 ? sql`1 = 1` : sql`(${sql.join(conditions, sql` and `)})`);

/**
 * The SQL conditions on contacts `c` that select a segment: any group holds. Archived
 * contacts are never part of a segment (they are out of the contact list too). One group
 * gives its conditions as they are, so the engine can order them.
 */
export function criteriaConditions(engine: Engine, accountId: string, criteria: Criteria, definitions: Definitions, now: number) {
  const listed: ContactCondition[] = [sql`c.archived = 0`];
  if (criteria.groups.length === 1) return [...listed, ...groupConditions(engine, accountId, criteria.groups[0]!, definitions, now)];
  const groups = criteria.groups.map((group) => all(groupConditions(engine, accountId, group, definitions, now)));
  return [...listed, sql`(${sql.join(groups, sql` or `)})`];
}

/** A set's ids, each once: grouped by contact when they repeat (an event set comes in contact order from its index). */
const distinct = (set: IdSet) => (set.repeats ? sql`${set.select} group by contact_id` : set.select);

/** No ids. */
const NO_IDS = sql`select contact_id from contact_tags where 1 = 0`;

/**
 * Sets joined by a compound operator of SQLite, which keeps distinct rows. Members as `select
 * contact_id from (...)`: SQLite gives every compound operator the same precedence, left to
 * right, so callers put the intersections before the exceptions.
 */
const compound = (sets: RawBuilder<unknown>[], operator: 'intersect' | 'except' | 'union') =>
  sql.join(
    sets.map((set) => sql`select contact_id from (${set})`),
    sql.raw(` ${operator} `),
  );

/**
 * A group as SQLite counts it (sqliteSetCount), archived contacts included: `ids`, the ids of
 * the contacts it selects, each once (its sets intersected, then those it must not be in taken
 * away); or, for a group with no set to start from (only exclusions, or no condition at all),
 * `allBut`, the sets its contacts are not in.
 */
function groupIds(conditions: IdCondition[]): { ids: RawBuilder<unknown> } | { allBut: IdSet[] } {
  if (conditions.includes(NOBODY)) return { ids: NO_IDS };
  const sets = conditions as Exclude<IdCondition, typeof NOBODY>[];
  const among = sets.flatMap((c) => ('among' in c ? [c.among] : []));
  const notAmong = sets.flatMap((c) => ('notAmong' in c ? [c.notAmong] : []));
  if (among.length === 0) return { allBut: notAmong };
  if (among.length === 1 && notAmong.length === 0) return { ids: distinct(among[0]!) };
  const kept =
    among.length === 1
      ? among[0]!.select
      : compound(
          among.map((set) => set.select),
          'intersect',
        );
  return { ids: notAmong.length === 0 ? kept : compound([kept, ...notAmong.map((set) => set.select)], 'except') };
}

/**
 * A count of sets, for SQLite, which has no hash joins: checked against every contact of the
 * account, each set of a segment costs a probe of a temporary index per contact (95,000
 * contacts, two sets: 120 ms of the 167 of a count). When every group has a set to start from,
 * the count is the groups' union, each id looked up by primary key: the work follows the sets'
 * sizes, not the account's. One group of exclusions only is the listed contacts less those in
 * any of its sets. Undefined for other criteria (a group without a set beside others), which
 * are counted contact by contact. CROSS JOIN fixes the order of the look-ups: SQLite keeps no
 * statistics to see that an account's contacts are many.
 */
function sqliteSetCount(accountId: string, groups: ReturnType<typeof groupIds>[]) {
  const listedAmong = (ids: RawBuilder<unknown>) => sql<{ n: number }>`select count(*) as n from (${ids}) m cross join contacts c
      where c.id = m.contact_id and c.account_id = ${accountId} and c.archived = 0`;
  const starts = groups.flatMap((group) => ('ids' in group ? [group.ids] : []));
  if (starts.length === groups.length) return listedAmong(starts.length === 1 ? starts[0]! : compound(starts, 'union'));
  const exclusions = groups.length === 1 && 'allBut' in groups[0]! ? groups[0].allBut : [];
  if (exclusions.length === 0) return undefined;
  // Each id once: a contact in two of the sets is taken away once.
  const excluded =
    exclusions.length === 1
      ? distinct(exclusions[0]!)
      : compound(
          exclusions.map((set) => set.select),
          'union',
        );
  return sql<{ n: number }>`select (select count(*) from contacts c where c.account_id = ${accountId} and c.archived = 0)
    - (${listedAmong(excluded)}) as n`;
}

/**
 * The statement counting the contacts the criteria select. PostgreSQL plans criteriaConditions
 * with hash joins over each set of ids; SQLite counts sets where it can (sqliteSetCount).
 */
export function segmentCountQuery(engine: Engine, accountId: string, criteria: Criteria, definitions: Definitions, now: number) {
  if (engine === 'sqlite') {
    const groups = criteria.groups.map((group) => groupIds(groupIdConditions(engine, accountId, group, definitions, now)));
    const count = sqliteSetCount(accountId, groups);
    if (count) return count;
  }
  return sql<{ n: number }>`select count(*) as n from contacts c
    where c.account_id = ${accountId} and ${sql.join(criteriaConditions(engine, accountId, criteria, definitions, now), sql` and `)}`;
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

/** How many contacts the criteria select (segmentCountQuery, run). */
export async function countSegmentContacts(
  db: Queryable,
  accountId: string,
  engine: Engine,
  criteria: Criteria,
  definitions: Definitions,
  now: number,
): Promise<number> {
  const { rows } = await segmentCountQuery(engine, accountId, criteria, definitions, now).execute(kyselyOf(db));
  return Number(rows[0]?.n ?? 0);
}
