import { type Expression, sql } from 'kysely';
import { constantStatement } from '../../db/constant-statements.js';
import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { ContactsTable, CustomFieldsTable } from '../../db/schema.js';
import { KPI_MAX_MICROS } from './kpi-values.js';

export interface IdentifierOwners {
  byId?: string;
  byEmail?: string;
  byPhone?: string;
}

export type FieldDefinition = Pick<CustomFieldsTable, 'id' | 'name' | 'name_key' | 'type'>;

/*
 * SQL of the contacts module, and nothing else. The account id comes first after the query
 * handle and is part of every WHERE: a contact, address or tracker of another account is never
 * read or written, whatever id the caller sends. Every statement runs unchanged on SQLite and
 * PostgreSQL (but for placeholders, and addTags' JSON function).
 */

/*
 * The statements of every contact write (insert, addresses, tags) are constant texts
 * (db/constant-statements.ts): the query builder's tree and a `sql` template's compile cost more
 * CPU than SQLite's insert itself on these hot paths (measured: ~60-100 us against ~10 us when
 * they were builder calls; ~2-5 us a statement as templates).
 */

const INSERT_CONTACT = constantStatement(
  `insert into contacts (id, account_id, name, archived, opted_out, metadata, created_at, updated_at)
    values (?, ?, ?, ?, ?, ?, ?, ?)`,
);

export async function insertContact(db: Queryable, accountId: string, row: Omit<ContactsTable, 'account_id'>): Promise<void> {
  await INSERT_CONTACT(kyselyOf(db), [
    row.id,
    accountId,
    row.name,
    row.archived,
    row.opted_out,
    row.metadata,
    row.created_at,
    row.updated_at,
  ]);
}

/** The insert of an address after the contact's others: the first one stored stays the primary. */
const addressInsert = (table: 'contact_emails' | 'contact_phones', column: 'email' | 'phone') =>
  // Casts: PostgreSQL cannot always infer a bare parameter's type in a SELECT list.
  constantStatement(`insert into ${table} (account_id, ${column}, contact_id, position)
    select cast(? as text), cast(? as text), cast(? as text), coalesce(max(position), -1) + 1
    from ${table} where account_id = ? and contact_id = ?`);

const ADD_EMAIL = addressInsert('contact_emails', 'email');
const ADD_PHONE = addressInsert('contact_phones', 'phone');

/** Appends an address after the contact's others: the first one stored stays the primary. */
export async function addEmail(db: Queryable, accountId: string, contactId: string, email: string): Promise<void> {
  await ADD_EMAIL(kyselyOf(db), [accountId, email, contactId, accountId, contactId]);
}

export async function addPhone(db: Queryable, accountId: string, contactId: string, phone: string): Promise<void> {
  await ADD_PHONE(kyselyOf(db), [accountId, phone, contactId, accountId, contactId]);
}

/**
 * The tags as one JSON array parameter, so one text serves every number of tags (a VALUES list
 * per count would be a text, and a prepared statement, per length). SQLite reads the array with
 * json_each, PostgreSQL with json_array_elements_text. `where true`: SQLite's parser needs a
 * WHERE before ON CONFLICT in an INSERT ... SELECT.
 */
const ADD_TAGS = constantStatement(
  `insert into contact_tags (account_id, contact_id, tag)
    select ?, ?, t.value from json_each(?) t where true
    on conflict (contact_id, tag) do nothing`,
  `insert into contact_tags (account_id, contact_id, tag)
    select cast($1 as text), cast($2 as text), t.value from json_array_elements_text(cast($3 as json)) as t(value)
    on conflict (contact_id, tag) do nothing`,
);

/** One statement for all tags; tags the contact already has are left as they are. */
export async function addTags(db: Queryable, accountId: string, contactId: string, tags: string[]): Promise<void> {
  await ADD_TAGS(kyselyOf(db), [accountId, contactId, JSON.stringify(tags)]);
}

/**
 * The contact's rows of `table` whose `column` is one of a JSON array of values (as ADD_TAGS: one
 * text for any number of them), deleted: tag removals and field clears.
 */
const deleteListed = (table: string, column: string) =>
  constantStatement(
    `delete from ${table} where account_id = ? and contact_id = ? and ${column} in (select j.value from json_each(?) j)`,
    `delete from ${table} where account_id = $1 and contact_id = $2
      and ${column} in (select j.value from json_array_elements_text(cast($3 as json)) as j(value))`,
  );

const REMOVE_TAGS = deleteListed('contact_tags', 'tag');

export async function removeTags(db: Queryable, accountId: string, contactId: string, tags: string[]): Promise<void> {
  await writeOn(db, (q) => REMOVE_TAGS(q, [accountId, contactId, JSON.stringify(tags)]));
}

/**
 * The values as one JSON array of [field id, stored JSON text] pairs, one text for any number of
 * them (as ADD_TAGS): built once, not a query builder's tree per call.
 */
const UPSERT_FIELD_VALUES = constantStatement(
  `insert into contact_field_values (account_id, contact_id, field_id, value)
    select ?, ?, json_extract(v.value, '$[0]'), json_extract(v.value, '$[1]') from json_each(?) v where true
    on conflict (contact_id, field_id) do update set value = excluded.value`,
  `insert into contact_field_values (account_id, contact_id, field_id, value)
    select cast($1 as text), cast($2 as text), v.value ->> 0, v.value ->> 1 from json_array_elements(cast($3 as json)) as v(value)
    on conflict (contact_id, field_id) do update set value = excluded.value`,
);

export async function upsertFieldValues(
  db: Queryable,
  accountId: string,
  contactId: string,
  values: { fieldId: string; json: string }[],
): Promise<void> {
  const pairs = JSON.stringify(values.map((v) => [v.fieldId, v.json]));
  await writeOn(db, (q) => UPSERT_FIELD_VALUES(q, [accountId, contactId, pairs]));
}

const CLEAR_FIELD_VALUES = deleteListed('contact_field_values', 'field_id');

export async function clearFieldValues(db: Queryable, accountId: string, contactId: string, fieldIds: string[]): Promise<void> {
  await writeOn(db, (q) => CLEAR_FIELD_VALUES(q, [accountId, contactId, JSON.stringify(fieldIds)]));
}

/** The increments as one JSON array of [KPI id, micros] pairs (as UPSERT_FIELD_VALUES). */
const ADD_KPIS = constantStatement<{ kpi_id: string }>(
  `insert into contact_kpis (account_id, contact_id, kpi_id, value_micros)
    select ?, ?, json_extract(k.value, '$[0]'), json_extract(k.value, '$[1]') from json_each(?) k where true
    on conflict (contact_id, kpi_id) do update set value_micros = contact_kpis.value_micros + excluded.value_micros
    where contact_kpis.value_micros + excluded.value_micros between ? and ?
    returning kpi_id`,
  `insert into contact_kpis (account_id, contact_id, kpi_id, value_micros)
    select cast($1 as text), cast($2 as text), k.value ->> 0, cast(k.value ->> 1 as bigint) from json_array_elements(cast($3 as json)) as k(value)
    on conflict (contact_id, kpi_id) do update set value_micros = contact_kpis.value_micros + excluded.value_micros
    where contact_kpis.value_micros + excluded.value_micros between cast($4 as bigint) and cast($5 as bigint)
    returning kpi_id`,
);

/**
 * Adds to the stored totals (micros) in the statement itself, never read-modify-write in
 * code, so concurrent increments all count on both engines. The range check is part of the
 * same statement: an increment that would take a total out of range leaves it as it is.
 * Returns the KPI ids whose totals were written.
 */
export async function addKpis(
  db: Queryable,
  accountId: string,
  contactId: string,
  increments: { kpiId: string; micros: number }[],
): Promise<string[]> {
  const pairs = JSON.stringify(increments.map((i) => [i.kpiId, i.micros]));
  const { rows } = await writeOn(db, (q) => ADD_KPIS(q, [accountId, contactId, pairs, -KPI_MAX_MICROS, KPI_MAX_MICROS]));
  return rows.map((r) => r.kpi_id);
}

export async function insertNote(
  db: Queryable,
  accountId: string,
  note: { id: string; contactId: string; text: string; createdBy: string; now: number },
): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('contact_notes')
      .values({
        id: note.id,
        account_id: accountId,
        contact_id: note.contactId,
        text: note.text,
        created_by: note.createdBy,
        created_at: note.now,
      })
      .execute(),
  );
}

/** Links the visitor to the contact, taking it from whichever contact had it. */
export async function linkTracker(db: Queryable, accountId: string, tracker: string, contactId: string, now: number): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('trackers')
      .values({ account_id: accountId, tracker, contact_id: contactId, linked_at: now })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'tracker'])
          .doUpdateSet({ contact_id: (eb) => eb.ref('excluded.contact_id'), linked_at: (eb) => eb.ref('excluded.linked_at') }),
      )
      .execute(),
  );
}

// ---- single look-ups (lead strings, contact show) ----

export async function findContactIdById(db: Queryable, accountId: string, id: string): Promise<string | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.id;
}

export async function findContactIdByEmail(db: Queryable, accountId: string, email: string): Promise<string | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('contact_emails')
    .select('contact_id')
    .where('account_id', '=', accountId)
    .where('email', '=', email)
    .executeTakeFirst();
  return row?.contact_id;
}

export async function findContactIdByPhone(db: Queryable, accountId: string, phone: string): Promise<string | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('contact_phones')
    .select('contact_id')
    .where('account_id', '=', accountId)
    .where('phone', '=', phone)
    .executeTakeFirst();
  return row?.contact_id;
}

/** Which of these ids are contacts of the account (a batch of events' look-up by leadId). */
export async function findContactIdsByIds(db: Queryable, accountId: string, ids: string[]): Promise<Set<string>> {
  const rows = await contactsByIdsQuery(db, ids).execute();
  return new Set(rows.filter((r) => r.account_id === accountId).map((r) => r.id));
}

/**
 * The contacts of these ids, by the primary key alone; the account is compared on the rows found
 * (findContactIdsByIds). With `account_id = ?` in the statement, SQLite, which has no statistics
 * here (Herald never runs ANALYZE on it), planned the look-up as a scan of the account's whole
 * contacts_list index, filtering it by the IN list: cheap at 1,000 contacts, 4.4 ms a batch of 100
 * events at 45,000 (docs/performance.md, sixth session: batchsqlite), growing with the account.
 */
export function contactsByIdsQuery(db: Queryable, ids: string[]) {
  return kyselyOf(db).selectFrom('contacts').select(['id', 'account_id']).where('id', 'in', ids);
}

/** Visitor id -> contact id, for those of these visitor ids linked in the account. */
export async function findContactIdsByTrackers(db: Queryable, accountId: string, trackers: string[]): Promise<Map<string, string>> {
  const rows = await kyselyOf(db)
    .selectFrom('trackers')
    .select(['tracker', 'contact_id'])
    .where('account_id', '=', accountId)
    .where('tracker', 'in', trackers)
    .execute();
  return new Map(rows.map((r) => [r.tracker, r.contact_id]));
}

// ---- the whole profile (contact show, webhooks, templates) ----

export async function getContact(db: Queryable, accountId: string, contactId: string): Promise<ContactsTable | undefined> {
  return kyselyOf(db).selectFrom('contacts').selectAll().where('account_id', '=', accountId).where('id', '=', contactId).executeTakeFirst();
}

export async function listEmails(db: Queryable, accountId: string, contactId: string): Promise<string[]> {
  const rows = await kyselyOf(db)
    .selectFrom('contact_emails')
    .select('email')
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.email);
}

export async function listPhones(db: Queryable, accountId: string, contactId: string): Promise<string[]> {
  const rows = await kyselyOf(db)
    .selectFrom('contact_phones')
    .select('phone')
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.phone);
}

/**
 * By contact id alone, which the primary key (contact_id, tag) serves in order: given an
 * account_id term as well, SQLite (no statistics) takes contact_tags_account_tag instead and
 * reads every tag of the account, milliseconds per contact in a large account. The rows'
 * account is checked here instead.
 */
export async function listTags(db: Queryable, accountId: string, contactId: string): Promise<string[]> {
  const rows = await kyselyOf(db)
    .selectFrom('contact_tags')
    .select(['account_id', 'tag'])
    .where('contact_id', '=', contactId)
    .orderBy('tag')
    .execute();
  return rows.filter((r) => r.account_id === accountId).map((r) => r.tag);
}

export async function listFieldValues(db: Queryable, accountId: string, contactId: string): Promise<{ name: string; value: string }[]> {
  return kyselyOf(db)
    .selectFrom('contact_field_values as v')
    .innerJoin('custom_fields as f', 'f.id', 'v.field_id')
    .select(['f.name', 'v.value'])
    .where('v.account_id', '=', accountId)
    .where('f.account_id', '=', accountId)
    .where('v.contact_id', '=', contactId)
    .orderBy('f.name_key')
    .execute();
}

export async function listKpis(db: Queryable, accountId: string, contactId: string): Promise<{ kpi_id: string; value_micros: number }[]> {
  return kyselyOf(db)
    .selectFrom('contact_kpis')
    .select(['kpi_id', 'value_micros'])
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .orderBy('kpi_id')
    .execute();
}

export async function listNotes(
  db: Queryable,
  accountId: string,
  contactId: string,
): Promise<{ text: string; created_by: string; created_at: number }[]> {
  return kyselyOf(db)
    .selectFrom('contact_notes')
    .select(['text', 'created_by', 'created_at'])
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function listTrackers(db: Queryable, accountId: string, contactId: string): Promise<string[]> {
  const rows = await kyselyOf(db)
    .selectFrom('trackers')
    .select('tracker')
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .orderBy('linked_at')
    .orderBy('tracker')
    .execute();
  return rows.map((r) => r.tracker);
}

/** Contact ids: a list, or a subquery of them. */
export type ContactIds = readonly string[] | Expression<string>;

// The same lists for many contacts at once (the dispatcher's due-time checks), by contact id
// alone: each table's contact_id index serves it. Every row carries its account_id, and the
// caller keeps only the rows of the account it asked for; rows come in each list's order. They
// answer the query, not its rows: contact-profile.ts runs them, and on PostgreSQL the dispatcher's
// claim embeds them, with the claimed sends' contacts as `contactIds` (dispatch-claim.pg.ts).

export function getContacts(db: Queryable, contactIds: ContactIds) {
  return kyselyOf(db).selectFrom('contacts').selectAll().where('id', 'in', contactIds);
}

export function listEmailsOf(db: Queryable, contactIds: ContactIds) {
  return kyselyOf(db)
    .selectFrom('contact_emails')
    .select(['account_id', 'contact_id', 'email'])
    .where('contact_id', 'in', contactIds)
    .orderBy('contact_id')
    .orderBy('position');
}

export function listPhonesOf(db: Queryable, contactIds: ContactIds) {
  return kyselyOf(db)
    .selectFrom('contact_phones')
    .select(['account_id', 'contact_id', 'phone'])
    .where('contact_id', 'in', contactIds)
    .orderBy('contact_id')
    .orderBy('position');
}

export function listTagsOf(db: Queryable, contactIds: ContactIds) {
  return kyselyOf(db)
    .selectFrom('contact_tags')
    .select(['account_id', 'contact_id', 'tag'])
    .where('contact_id', 'in', contactIds)
    .orderBy('contact_id')
    .orderBy('tag');
}

export function listFieldValuesOf(db: Queryable, contactIds: ContactIds) {
  return kyselyOf(db)
    .selectFrom('contact_field_values as v')
    .innerJoin('custom_fields as f', (join) => join.onRef('f.id', '=', 'v.field_id').onRef('f.account_id', '=', 'v.account_id'))
    .select(['v.account_id', 'v.contact_id', 'f.name', 'v.value'])
    .where('v.contact_id', 'in', contactIds)
    .orderBy('v.contact_id')
    .orderBy('f.name_key');
}

export function listKpisOf(db: Queryable, contactIds: ContactIds) {
  return kyselyOf(db)
    .selectFrom('contact_kpis')
    .select(['account_id', 'contact_id', 'kpi_id', 'value_micros'])
    .where('contact_id', 'in', contactIds)
    .orderBy('contact_id')
    .orderBy('kpi_id');
}

export function listNotesOf(db: Queryable, contactIds: ContactIds) {
  return kyselyOf(db)
    .selectFrom('contact_notes')
    .select(['account_id', 'contact_id', 'text', 'created_by', 'created_at'])
    .where('contact_id', 'in', contactIds)
    .orderBy('contact_id')
    .orderBy('created_at')
    .orderBy('id');
}

export function listTrackersOf(db: Queryable, contactIds: ContactIds) {
  return kyselyOf(db)
    .selectFrom('trackers')
    .select(['account_id', 'contact_id', 'tracker'])
    .where('contact_id', 'in', contactIds)
    .orderBy('contact_id')
    .orderBy('linked_at')
    .orderBy('tracker');
}

/** Number of contacts changed: 0 when the id is unknown in this account. */
export async function setFlags(
  db: Queryable,
  accountId: string,
  contactId: string,
  values: { archived?: 0 | 1; opted_out?: 0 | 1; updated_at: number },
): Promise<number> {
  const result = await writeOn(db, (q) =>
    q
      .updateTable('contacts')
      .set({ ...values, version: sql`version + 1` })
      .where('account_id', '=', accountId)
      .where('id', '=', contactId)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}
