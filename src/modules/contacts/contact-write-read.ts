import { type RawBuilder, sql } from 'kysely';
import { type Bind, onPostgres, StatementShapes } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import type { FieldDefinition, IdentifierOwners } from './contacts.repo.js';
import type { NormalizedLead } from './lead-input.js';

/** Everything the rules of a lead write need, read in one statement (one snapshot). */
export interface ContactWriteRead {
  /** Who owns each sent identifier (lookup order and the 409 check need all three). */
  owners: IdentifierOwners;
  /** The contact the lookup order picks (id -> email -> phone), as stored; undefined when none. */
  contact?: { id: string; metadata: string; version: number };
  /** The custom fields the call names (by name key) and the KPI ids of it that exist. */
  fields: FieldDefinition[];
  kpiIds: string[];
}

/**
 * The one read of a lead write, as SQL to run alone (readForContactWrite) or inside a caller's
 * statement (a trigger with a `lead` object reads its own state in the same statement, so both
 * reads see one snapshot). `with`: the CTE `c`, the contact the lookup order picks (none when
 * no identifier is sent); `rows`: the rows of the read (kind, id, a, b, c, n), undefined when
 * there is nothing to read; `picked`: the id of the contact the lookup order picks (coalesce of
 * the owners of id, email, phone), a scalar expression, null when none.
 */
export interface ContactWriteReadSql {
  with: RawBuilder<unknown> | undefined;
  rows: RawBuilder<unknown> | undefined;
  picked: RawBuilder<string | null>;
}

/** A row of ContactWriteReadSql.rows. */
export type ContactWriteReadRow = { kind: string; id: string; a: string | null; b: string | null; c: string | null; n: number | null };

/**
 * The values of a lead write's read, by name: what the read's SQL binds (db/constant-statements.ts,
 * Bind). Which identifiers are present and how many field keys and KPI ids there are is the
 * read's shape (contactWriteReadShape): its text depends on nothing else.
 */
export type ContactWriteReadValues = {
  accountId: string;
  id?: string;
  email?: string;
  phone?: string;
  fieldKeys: readonly string[];
  kpiIds: readonly string[];
};

export function contactWriteReadValues(
  accountId: string,
  lead: NormalizedLead,
  fieldKeys: readonly string[],
  kpiIds: readonly string[],
): ContactWriteReadValues {
  return { accountId, id: lead.id, email: lead.email, phone: lead.phone, fieldKeys, kpiIds };
}

/** Every fact of the values the read's text depends on (contactWriteReadParts' decisions). */
export function contactWriteReadShape(v: ContactWriteReadValues): string {
  return `${v.id === undefined ? '-' : 'i'}${v.email === undefined ? '-' : 'e'}${v.phone === undefined ? '-' : 'p'}:${v.fieldKeys.length}:${v.kpiIds.length}`;
}

/**
 * Owners of the sent identifiers, the contact they pick with its metadata and version, and the
 * field and KPI definitions named, as rows of one UNION ALL (the same text on both engines but
 * for the row lock). The text is decided on the shape of `values` (contactWriteReadShape) and
 * takes the values themselves through `bind`, so it can be compiled once per shape.
 *
 * With `lock` (PostgreSQL) the contact's row is read FOR UPDATE: inside a caller's transaction
 * (a trigger, a batch, an import) the lock is held to its commit, as the touch that used to
 * come first held it, so the guard cannot fail there; inside the write's own statement
 * (contact-write-first.ts) it is that statement's. A read that runs alone, autocommit, takes no
 * lock (trigger-lead-read.ts): it would end with the statement, the write's version guard is
 * what protects the decision, and a row lock turns the read into a transaction of its own, with
 * a transaction id, a WAL record for the lock and a commit flushed to disk.
 */
export function contactWriteReadParts(lock: boolean, values: ContactWriteReadValues, bind: Bind): ContactWriteReadSql {
  const none = sql`cast(null as text)`;
  const accountId = bind('accountId');
  const owner: RawBuilder<unknown>[] = [];
  const parts: RawBuilder<unknown>[] = [];
  if (values.id !== undefined) {
    const byId = sql`select id from contacts where account_id = ${accountId} and id = ${bind('id')}`;
    owner.push(sql`(${byId})`);
    parts.push(sql`select 'id' as kind, id, ${none} as a, ${none} as b, ${none} as c, cast(null as integer) as n from (${byId}) o`);
  }
  if (values.email !== undefined) {
    const byEmail = sql`select contact_id from contact_emails where account_id = ${accountId} and email = ${bind('email')}`;
    owner.push(sql`(${byEmail})`);
    parts.push(
      sql`select 'email' as kind, contact_id as id, ${none} as a, ${none} as b, ${none} as c, cast(null as integer) as n from (${byEmail}) o`,
    );
  }
  if (values.phone !== undefined) {
    const byPhone = sql`select contact_id from contact_phones where account_id = ${accountId} and phone = ${bind('phone')}`;
    owner.push(sql`(${byPhone})`);
    parts.push(
      sql`select 'phone' as kind, contact_id as id, ${none} as a, ${none} as b, ${none} as c, cast(null as integer) as n from (${byPhone}) o`,
    );
  }
  const list = (name: string, length: number) => sql.join(Array.from({ length }, (_, i) => sql`cast(${bind(name, i)} as text)`));
  if (values.fieldKeys.length > 0) {
    parts.push(
      sql`select 'field' as kind, id, name as a, name_key as b, type as c, cast(null as integer) as n from custom_fields where account_id = ${accountId} and name_key in (${list('fieldKeys', values.fieldKeys.length)})`,
    );
  }
  if (values.kpiIds.length > 0) {
    parts.push(
      sql`select 'kpi' as kind, kpi_id as id, ${none} as a, ${none} as b, ${none} as c, cast(null as integer) as n from kpis where account_id = ${accountId} and kpi_id in (${list('kpiIds', values.kpiIds.length)})`,
    );
  }
  const nobody = none as RawBuilder<string | null>;
  if (owner.length === 0)
    return { with: undefined, rows: parts.length === 0 ? undefined : sql.join(parts, sql` union all `), picked: nobody };
  // SQLite's coalesce takes two arguments or more; coalesce gives the lookup order.
  const picked = (owner.length === 1 ? owner[0]! : sql`coalesce(${sql.join(owner, sql`, `)})`) as RawBuilder<string | null>;
  const forUpdate = lock ? sql` for update` : sql``;
  return {
    with: sql`c as (select id, metadata, version from contacts where account_id = ${accountId} and id = ${picked}${forUpdate})`,
    // The contact row as the first part.
    rows: sql.join(
      [sql`select 'contact' as kind, id, metadata as a, ${none} as b, ${none} as c, version as n from c`, ...parts],
      sql` union all `,
    ),
    picked,
  };
}

/** True when the read `read` (a CTE of its rows) found no owner and no contact: its definitions' rows aside. */
export function nobodyFoundSql(read = sql.raw('r')): RawBuilder<boolean> {
  return sql<boolean>`not exists (select 1 from ${read} where kind not in ('field', 'kpi'))`;
}

/**
 * PostgreSQL: true when the custom field and KPI rows of the read `read` (a CTE of its rows,
 * ContactWriteReadRow's columns) are exactly those bound as `definitions`, the JSON of
 * definitionRows (definitions-seen.ts), in its order. A statement that decided on remembered
 * definitions writes only under this condition.
 */
export function definitionsUnchangedSql(bind: Bind, read = sql.raw('r')): RawBuilder<boolean> {
  return sql<boolean>`(select coalesce(jsonb_agg(jsonb_build_array(kind, id, a, b, c) order by kind, id collate "C"), '[]'::jsonb)
    from ${read} where kind in ('field', 'kpi')) = cast(${bind('definitions')} as jsonb)`;
}

/** True when the read has rows to read (an identifier, a field key or a KPI id is sent). */
export const contactWriteReadHasRows = (v: ContactWriteReadValues): boolean =>
  v.id !== undefined || v.email !== undefined || v.phone !== undefined || v.fieldKeys.length > 0 || v.kpiIds.length > 0;

/** The rows of a ContactWriteReadSql as what the rules read. */
export function contactWriteReadOf(rows: ContactWriteReadRow[]): ContactWriteRead {
  const read: ContactWriteRead = { owners: {}, fields: [], kpiIds: [] };
  for (const row of rows) {
    if (row.kind === 'contact') read.contact = { id: row.id, metadata: row.a!, version: Number(row.n) };
    else if (row.kind === 'id') read.owners.byId = row.id;
    else if (row.kind === 'email') read.owners.byEmail = row.id;
    else if (row.kind === 'phone') read.owners.byPhone = row.id;
    else if (row.kind === 'field') read.fields.push({ id: row.id, name: row.a!, name_key: row.b!, type: row.c as FieldDefinition['type'] });
    else if (row.kind === 'kpi') read.kpiIds.push(row.id);
  }
  return read;
}

/** The read's texts, compiled once per shape and engine. */
const READS = new StatementShapes();

/**
 * The one read of a lead write (src/db/write-unit.ts), in one statement (contactWriteReadParts).
 * `inTransaction`: on PostgreSQL the read locks the contact's row (FOR UPDATE) to the commit,
 * so the write that follows cannot lose a race. Outside a transaction (the first attempt,
 * autocommit) a lock would end with the read, and would only make the read a transaction of its
 * own (an xid, a WAL record, a commit flushed to disk): the write's version guard catches a change.
 */
export async function readForContactWrite(q: Tx, values: ContactWriteReadValues, inTransaction = true): Promise<ContactWriteRead> {
  if (!contactWriteReadHasRows(values)) return contactWriteReadOf([]);
  const lock = inTransaction && onPostgres(q);
  const { rows } = await READS.run(
    q,
    `${contactWriteReadShape(values)}${lock ? ' lock' : ''}`,
    values,
    (bind) => contactWriteReadStatement(contactWriteReadParts(lock, values, bind))!,
  );
  return contactWriteReadOf(rows as ContactWriteReadRow[]);
}

/** The read as a statement of its own (rows of ContactWriteReadRow); undefined when there is nothing to read. */
export function contactWriteReadStatement(read: ContactWriteReadSql): RawBuilder<ContactWriteReadRow> | undefined {
  if (read.rows === undefined) return undefined;
  return (read.with === undefined ? read.rows : sql`with ${read.with} ${read.rows}`) as RawBuilder<ContactWriteReadRow>;
}
