import { type RawBuilder, sql } from 'kysely';
import { type Bind, type BindValues, onPostgres, StatementShapes } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import { StaleRead } from '../../db/write-unit.js';
import * as repo from './contacts.repo.js';
import { KPI_MAX_MICROS } from './kpi-values.js';

/**
 * What a lead write does, as decided in TypeScript from its one read (contact-write.ts):
 * defined once, applied by one of two executors below, one PostgreSQL statement or a
 * sequence of SQLite statements, which must do the same thing.
 */
export interface ContactWritePlan {
  contactId: string;
  now: number;
  /** A new contact (`insert`), or the one read, guarded by the version read (`update`). */
  contact: { kind: 'insert'; name: string; metadata: string } | { kind: 'update'; version: number; name?: string; metadata?: string };
  email?: string;
  phone?: string;
  tagsAdd: string[];
  tagsRemove: string[];
  fieldSets: { fieldId: string; json: string }[];
  fieldClears: string[];
  kpis: { kpiId: string; micros: number }[];
  note?: { id: string; text: string; createdBy: string };
  tracker?: string;
}

/**
 * Applies the plan; returns the KPI ids whose totals were written (an increment that would
 * take a total out of range is left out, per KPI). Throws StaleRead when the contact changed
 * since the read (its version moved, or it is gone): nothing was written then.
 */
export function executeContactWrite(q: Tx, accountId: string, plan: ContactWritePlan): Promise<string[]> {
  return onPostgres(q) ? inOneStatement(q, accountId, plan) : statementByStatement(q, accountId, plan);
}

/**
 * Every fact of a plan that the text of its PostgreSQL statement depends on (contactWriteParts
 * decides on nothing else): which parts it has. Lists are single array parameters, so their
 * lengths are not part of it. The statement is compiled once per shape (db/constant-statements.ts).
 */
export interface ContactWriteShape {
  insert: boolean;
  name: boolean;
  metadata: boolean;
  email: boolean;
  phone: boolean;
  tagsRemove: boolean;
  tagsAdd: boolean;
  fieldSets: boolean;
  fieldClears: boolean;
  kpis: boolean;
  note: boolean;
  tracker: boolean;
}

export function contactWriteShapeOf(plan: ContactWritePlan): ContactWriteShape {
  const contact = plan.contact;
  return {
    insert: contact.kind === 'insert',
    name: contact.name !== undefined,
    metadata: contact.metadata !== undefined,
    email: plan.email !== undefined,
    phone: plan.phone !== undefined,
    tagsRemove: plan.tagsRemove.length > 0,
    tagsAdd: plan.tagsAdd.length > 0,
    fieldSets: plan.fieldSets.length > 0,
    fieldClears: plan.fieldClears.length > 0,
    kpis: plan.kpis.length > 0,
    note: plan.note !== undefined,
    tracker: plan.tracker !== undefined,
  };
}

/** The shape as a key of StatementShapes: one letter per fact, in a fixed order. */
export function contactWriteShapeKey(s: ContactWriteShape): string {
  return `${s.insert ? 'I' : 'U'}${s.name ? 'n' : '-'}${s.metadata ? 'm' : '-'}${s.email ? 'e' : '-'}${s.phone ? 'p' : '-'}${s.tagsRemove ? 'r' : '-'}${s.tagsAdd ? 't' : '-'}${s.fieldSets ? 'f' : '-'}${s.fieldClears ? 'c' : '-'}${s.kpis ? 'k' : '-'}${s.note ? 'o' : '-'}${s.tracker ? 'x' : '-'}`;
}

/** What a plan's statement binds, by name (contactWriteParts). */
export function contactWriteValues(accountId: string, plan: ContactWritePlan): BindValues {
  const contact = plan.contact;
  return {
    accountId,
    contactId: plan.contactId,
    now: plan.now,
    name: contact.name,
    metadata: contact.metadata,
    version: contact.kind === 'update' ? contact.version : undefined,
    email: plan.email,
    phone: plan.phone,
    tagsRemove: plan.tagsRemove,
    tagsAdd: plan.tagsAdd,
    fieldIds: plan.fieldSets.map((f) => f.fieldId),
    fieldValues: plan.fieldSets.map((f) => f.json),
    fieldClears: plan.fieldClears,
    kpiIds: plan.kpis.map((k) => k.kpiId),
    kpiMicros: plan.kpis.map((k) => k.micros),
    noteId: plan.note?.id,
    noteText: plan.note?.text,
    noteBy: plan.note?.createdBy,
    tracker: plan.tracker,
  };
}

/** Every write to a contact lists it again (un-archives it), stamps it, and moves its version. */
function touchSet(bind: Bind, change: { name: boolean; metadata: boolean }) {
  const parts = [sql`archived = 0`, sql`updated_at = ${bind('now')}`, sql`version = version + 1`];
  if (change.name) parts.push(sql`name = ${bind('name')}`);
  if (change.metadata) parts.push(sql`metadata = ${bind('metadata')}`);
  return sql.join(parts, sql`, `);
}

const KPI_RANGE = sql`between ${-KPI_MAX_MICROS} and ${KPI_MAX_MICROS}`;

/** The statements of this file, compiled once per shape and engine. */
const STATEMENTS = new StatementShapes();

/**
 * PostgreSQL: one data-modifying CTE. `c` is the guard: the insert of the new contact, or the
 * update of the one read `where version = <read>`, which PostgreSQL re-checks on the newest row
 * once it holds the row's lock. Every other part selects from `c`, so when the guard matches
 * nothing the statement writes nothing. A unique violation (a lost race on a new address)
 * fails the whole statement; inWriteUnit runs the unit again.
 */
async function inOneStatement(q: Tx, accountId: string, plan: ContactWritePlan): Promise<string[]> {
  const shape = contactWriteShapeOf(plan);
  const { rows } = await STATEMENTS.run(
    q,
    `plan ${contactWriteShapeKey(shape)}`,
    contactWriteValues(accountId, plan),
    (bind) => contactWriteStatement(bind, shape) as RawBuilder<{ kind: string; id: string }>,
  );
  if (!rows.some((r) => r.kind === 'contact')) throw new StaleRead('contact');
  return rows.filter((r) => r.kind === 'kpi').map((r) => r.id);
}

/**
 * More for the write's guard, from a caller that writes the contact within its own statement
 * (a trigger with a `lead` object): parts that come before the contact's (`before`) and after
 * all of them (`after`, which may select from `c`, the contact written), a condition the update
 * of an existing contact also needs (`requires`), and rows of its own in the result
 * (`results`, selects of `kind` and `id`). Their text is part of the caller's shape.
 */
export interface ContactWriteExtras {
  before?: RawBuilder<unknown>[];
  requires?: RawBuilder<unknown>;
  /** A condition the insert of a new contact needs (contact-write-first.ts): without it nothing is written. */
  insertOnlyIf?: RawBuilder<unknown>;
  /**
   * The contact an `update` plan writes, as a scalar of the same statement (the id its read
   * picked, contact-write-first.ts), in place of the plan's id and version guard: the update
   * itself locks the row and writes its newest version, and a contact gone (erased) matches
   * nothing, so nothing else is written either.
   */
  updateFound?: RawBuilder<unknown>;
  after?: RawBuilder<unknown>[];
  results?: RawBuilder<unknown>[];
}

/**
 * The PostgreSQL statement of a plan of this shape, its values taken through `bind`
 * (contactWriteValues): rows of `kind` 'contact' (the guard matched: the contact written),
 * 'kpi' (a KPI whose total was written) and the caller's own (extras.results).
 */
export function contactWriteStatement(bind: Bind, shape: ContactWriteShape, extras: ContactWriteExtras = {}): RawBuilder<unknown> {
  const { parts, results } = contactWriteParts(bind, shape, extras);
  return sql`with ${sql.join(parts, sql`, `)} ${sql.join(results, sql` union all `)}`;
}

/**
 * The CTEs (`parts`) and result rows (`results`) of a plan's statement, for a caller that puts
 * two plans in one statement (contact-write-first.ts): `prefix` starts the name of each CTE and
 * the `kind` of each result row, so the two do not collide (only the plan's own names; the
 * extras' are the caller's). The text depends on `shape` and `prefix` alone; every value of the
 * plan comes through `bind` (names of contactWriteValues).
 */
export function contactWriteParts(
  bind: Bind,
  shape: ContactWriteShape,
  extras: ContactWriteExtras = {},
  prefix = '',
): { parts: RawBuilder<unknown>[]; results: RawBuilder<unknown>[] } {
  const name = (cte: string) => sql.raw(`${prefix}${cte}`);
  const c = name('c');
  const accountId = bind('accountId');
  const a = sql`cast(${accountId} as text)`;
  const now = sql`cast(${bind('now')} as bigint)`;
  const requires = extras.requires === undefined ? sql`` : sql` and ${extras.requires}`;
  // The contact updated: the one read (guarded by its version), or the one the caller's read
  // picks in the same statement (no guard: the update takes the row's lock on its newest version).
  const which = () =>
    extras.updateFound === undefined ? sql`id = ${bind('contactId')} and version = ${bind('version')}` : sql`id = ${extras.updateFound}`;
  const parts = [
    ...(extras.before ?? []),
    shape.insert && extras.insertOnlyIf !== undefined
      ? sql`${c} as (insert into contacts (id, account_id, name, archived, opted_out, metadata, created_at, updated_at)
          select cast(${bind('contactId')} as text), ${a}, cast(${bind('name')} as text), 0, 0, cast(${bind('metadata')} as text), ${now}, ${now}
          where ${extras.insertOnlyIf} returning id)`
      : shape.insert
        ? sql`${c} as (insert into contacts (id, account_id, name, archived, opted_out, metadata, created_at, updated_at)
          values (${bind('contactId')}, ${accountId}, ${bind('name')}, 0, 0, ${bind('metadata')}, ${bind('now')}, ${bind('now')}) returning id)`
        : sql`${c} as (update contacts set ${touchSet(bind, shape)}
          where account_id = ${accountId} and ${which()}${requires} returning id)`,
  ];
  // A contact inserted by this statement has no addresses yet: its first is at 0, without the
  // look-up (an index probe per address of every new contact).
  const nextPosition = (table: 'contact_emails' | 'contact_phones') =>
    shape.insert
      ? sql`0`
      : sql`coalesce((select max(position) from ${sql.table(table)} where account_id = ${accountId} and contact_id = ${c}.id), -1) + 1`;
  if (shape.email) {
    parts.push(sql`${name('e')} as (insert into contact_emails (account_id, email, contact_id, position)
      select ${a}, cast(${bind('email')} as text), ${c}.id, ${nextPosition('contact_emails')} from ${c})`);
  }
  if (shape.phone) {
    parts.push(sql`${name('p')} as (insert into contact_phones (account_id, phone, contact_id, position)
      select ${a}, cast(${bind('phone')} as text), ${c}.id, ${nextPosition('contact_phones')} from ${c})`);
  }
  if (shape.tagsRemove) {
    parts.push(sql`${name('tr')} as (delete from contact_tags
      where account_id = ${accountId} and contact_id in (select id from ${c}) and tag = any(cast(${bind('tagsRemove')} as text[])))`);
  }
  if (shape.tagsAdd) {
    parts.push(sql`${name('ta')} as (insert into contact_tags (account_id, contact_id, tag)
      select ${a}, ${c}.id, t.tag from ${c} cross join unnest(cast(${bind('tagsAdd')} as text[])) as t(tag)
      on conflict (contact_id, tag) do nothing)`);
  }
  if (shape.fieldSets) {
    parts.push(sql`${name('fs')} as (insert into contact_field_values (account_id, contact_id, field_id, value)
      select ${a}, ${c}.id, f.field_id, f.value from ${c} cross join unnest(cast(${bind('fieldIds')} as text[]), cast(${bind('fieldValues')} as text[])) as f(field_id, value)
      on conflict (contact_id, field_id) do update set value = excluded.value)`);
  }
  if (shape.fieldClears) {
    parts.push(sql`${name('fc')} as (delete from contact_field_values
      where account_id = ${accountId} and contact_id in (select id from ${c}) and field_id = any(cast(${bind('fieldClears')} as text[])))`);
  }
  if (shape.kpis) {
    parts.push(sql`${name('k')} as (insert into contact_kpis (account_id, contact_id, kpi_id, value_micros)
      select ${a}, ${c}.id, k.kpi_id, k.micros from ${c} cross join unnest(cast(${bind('kpiIds')} as text[]), cast(${bind('kpiMicros')} as bigint[])) as k(kpi_id, micros)
      on conflict (contact_id, kpi_id) do update set value_micros = contact_kpis.value_micros + excluded.value_micros
      where contact_kpis.value_micros + excluded.value_micros ${KPI_RANGE}
      returning kpi_id)`);
  }
  if (shape.note) {
    parts.push(sql`${name('n')} as (insert into contact_notes (id, account_id, contact_id, text, created_by, created_at)
      select cast(${bind('noteId')} as text), ${a}, ${c}.id, cast(${bind('noteText')} as text), cast(${bind('noteBy')} as text), ${now} from ${c})`);
  }
  if (shape.tracker) {
    parts.push(sql`${name('tk')} as (insert into trackers (account_id, tracker, contact_id, linked_at)
      select ${a}, cast(${bind('tracker')} as text), ${c}.id, ${now} from ${c}
      on conflict (account_id, tracker) do update set contact_id = excluded.contact_id, linked_at = excluded.linked_at)`);
  }
  parts.push(...(extras.after ?? []));
  const results = [sql`select ${sql.lit(`${prefix}contact`)} as kind, id from ${c}`];
  if (shape.kpis) results.push(sql`select ${sql.lit(`${prefix}kpi`)} as kind, kpi_id as id from ${name('k')}`);
  results.push(...(extras.results ?? []));
  return { parts, results };
}

/**
 * SQLite (no data-modifying CTEs): the same writes, one statement each, in the unit's
 * transaction, where nothing can change between the read and the write; the guard is kept so
 * the two executors stay the same.
 */
async function statementByStatement(q: Tx, accountId: string, plan: ContactWritePlan): Promise<string[]> {
  const contact = plan.contact;
  if (contact.kind === 'insert') {
    await repo.insertContact(q, accountId, {
      id: plan.contactId,
      name: contact.name,
      archived: 0,
      opted_out: 0,
      metadata: contact.metadata,
      created_at: plan.now,
      updated_at: plan.now,
      version: 0,
    });
  } else {
    const change = { name: contact.name !== undefined, metadata: contact.metadata !== undefined };
    const values = {
      accountId,
      contactId: plan.contactId,
      version: contact.version,
      now: plan.now,
      name: contact.name,
      metadata: contact.metadata,
    };
    const result = await STATEMENTS.run(
      q,
      `update ${change.name ? 'n' : '-'}${change.metadata ? 'm' : '-'}`,
      values,
      (bind) => sql`update contacts set ${touchSet(bind, change)}
        where account_id = ${bind('accountId')} and id = ${bind('contactId')} and version = ${bind('version')}`,
    );
    if (Number(result.numAffectedRows ?? 0) === 0) throw new StaleRead('contact');
  }
  if (plan.email !== undefined) await repo.addEmail(q, accountId, plan.contactId, plan.email);
  if (plan.phone !== undefined) await repo.addPhone(q, accountId, plan.contactId, plan.phone);
  if (plan.tagsRemove.length > 0) await repo.removeTags(q, accountId, plan.contactId, plan.tagsRemove);
  if (plan.tagsAdd.length > 0) await repo.addTags(q, accountId, plan.contactId, plan.tagsAdd);
  if (plan.fieldSets.length > 0) await repo.upsertFieldValues(q, accountId, plan.contactId, plan.fieldSets);
  if (plan.fieldClears.length > 0) await repo.clearFieldValues(q, accountId, plan.contactId, plan.fieldClears);
  const added = plan.kpis.length > 0 ? await repo.addKpis(q, accountId, plan.contactId, plan.kpis) : [];
  if (plan.note !== undefined) await repo.insertNote(q, accountId, { ...plan.note, contactId: plan.contactId, now: plan.now });
  if (plan.tracker !== undefined) await repo.linkTracker(q, accountId, plan.tracker, plan.contactId, plan.now);
  return added;
}
