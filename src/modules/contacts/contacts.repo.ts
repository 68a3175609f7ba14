import { sql, type Kysely } from 'kysely';
import type { ContactsTable, CustomFieldsTable, Database } from '../../db/schema.js';
import { KPI_MAX_MICROS } from './kpi-values.js';


export interface IdentifierOwners {
  byId?: string;
  byEmail?: string;
  byPhone?: string;
}

/** The SET list of every write to a contact: listed again (un-archived), stamped, renamed if a name was sent. */
function touch(change: { name?: string; now: number }) {
  return change.name === undefined
    ? sql`archived = 0, updated_at = ${change.now}`
    : sql`archived = 0, updated_at = ${change.now}, name = ${change.name}`;
}

export type FieldDefinition = Pick<CustomFieldsTable, 'id' | 'name' | 'name_key' | 'type'>;

/**
 * SQL of the contacts module, and nothing else. The account id comes first in every method
 * and is part of every WHERE: a contact, address or tracker of another account is never read
 * or written, whatever id the caller sends. Every statement runs unchanged on SQLite and
 * PostgreSQL.
 */
export class ContactsRepo {
  constructor(private readonly q: Kysely<Database>) {}

  /*
   * The statements of every contact write (look-up, touch, create, addresses) are written as
   * `sql` templates rather than with the query builder: building and compiling the builder's
   * tree cost several times the statement itself on SQLite (measured: ~60-100 us against
   * ~10 us for the touch), and these run on every request. Placeholders still come from the
   * dialect, so the same text runs on both engines.
   */

  /**
   * Who owns each sent identifier, in one round trip: the lookup order and the conflict check
   * of decisions.md both need all three answers.
   */
  async findOwners(accountId: string, ids: { id?: string; email?: string; phone?: string }): Promise<IdentifierOwners> {
    const parts = [];
    if (ids.id !== undefined) parts.push(sql`select 'id' as kind, id as contact_id from contacts where account_id = ${accountId} and id = ${ids.id}`);
    if (ids.email !== undefined) {
      parts.push(sql`select 'email' as kind, contact_id from contact_emails where account_id = ${accountId} and email = ${ids.email}`);
    }
    if (ids.phone !== undefined) {
      parts.push(sql`select 'phone' as kind, contact_id from contact_phones where account_id = ${accountId} and phone = ${ids.phone}`);
    }
    if (parts.length === 0) return {};
    const { rows } = await sql<{ kind: string; contact_id: string }>`${sql.join(parts, sql` union all `)}`.execute(this.q);
    const owners: IdentifierOwners = {};
    for (const row of rows) {
      if (row.kind === 'id') owners.byId = row.contact_id;
      else if (row.kind === 'email') owners.byEmail = row.contact_id;
      else owners.byPhone = row.contact_id;
    }
    return owners;
  }

  async insertContact(accountId: string, row: Omit<ContactsTable, 'account_id'>): Promise<void> {
    await sql`insert into contacts (id, account_id, name, archived, opted_out, metadata, created_at, updated_at)
      values (${row.id}, ${accountId}, ${row.name}, ${row.archived}, ${row.opted_out}, ${row.metadata}, ${row.created_at}, ${row.updated_at})`.execute(this.q);
  }

  /**
   * Every write lists the contact again (un-archives it) and stamps it. Being the first write
   * of an update, it also takes the row lock on PostgreSQL, so the metadata returned here can
   * be merged without losing a concurrent writer's keys. Undefined when there is no such contact.
   */
  async touchContact(accountId: string, contactId: string, change: { name?: string; now: number }): Promise<string | undefined> {
    const { rows } = await sql<{ metadata: string }>`update contacts set ${touch(change)}
      where account_id = ${accountId} and id = ${contactId} returning metadata`.execute(this.q);
    return rows[0]?.metadata;
  }

  /**
   * touchContact for the contact one identifier names, found and touched in one statement:
   * the usual write sends a single identifier, and on SQLite every statement costs as much as
   * the rest of the request. Undefined when the identifier matches no contact.
   */
  async touchContactBy(
    accountId: string,
    by: { id: string } | { email: string } | { phone: string },
    change: { name?: string; now: number },
  ): Promise<{ id: string; metadata: string } | undefined> {
    const target =
      'id' in by
        ? sql`${by.id}`
        : 'email' in by
          ? sql`(select contact_id from contact_emails where account_id = ${accountId} and email = ${by.email})`
          : sql`(select contact_id from contact_phones where account_id = ${accountId} and phone = ${by.phone})`;
    const { rows } = await sql<{ id: string; metadata: string }>`update contacts set ${touch(change)}
      where account_id = ${accountId} and id = ${target} returning id, metadata`.execute(this.q);
    return rows[0];
  }

  async setMetadata(accountId: string, contactId: string, metadata: string): Promise<void> {
    await sql`update contacts set metadata = ${metadata} where account_id = ${accountId} and id = ${contactId}`.execute(this.q);
  }

  /** Appends an address after the contact's others: the first one stored stays the primary. */
  async addEmail(accountId: string, contactId: string, email: string): Promise<void> {
    // Casts: PostgreSQL cannot always infer a bare parameter's type in a SELECT list.
    await sql`insert into contact_emails (account_id, email, contact_id, position)
      select cast(${accountId} as text), cast(${email} as text), cast(${contactId} as text), coalesce(max(position), -1) + 1
      from contact_emails where account_id = ${accountId} and contact_id = ${contactId}`.execute(this.q);
  }

  async addPhone(accountId: string, contactId: string, phone: string): Promise<void> {
    await sql`insert into contact_phones (account_id, phone, contact_id, position)
      select cast(${accountId} as text), cast(${phone} as text), cast(${contactId} as text), coalesce(max(position), -1) + 1
      from contact_phones where account_id = ${accountId} and contact_id = ${contactId}`.execute(this.q);
  }

  /** One statement for all tags; tags the contact already has are left as they are. */
  async addTags(accountId: string, contactId: string, tags: string[]): Promise<void> {
    await this.q
      .insertInto('contact_tags')
      .values(tags.map((tag) => ({ account_id: accountId, contact_id: contactId, tag })))
      .onConflict((oc) => oc.columns(['contact_id', 'tag']).doNothing())
      .execute();
  }

  async removeTags(accountId: string, contactId: string, tags: string[]): Promise<void> {
    await this.q.deleteFrom('contact_tags').where('account_id', '=', accountId).where('contact_id', '=', contactId).where('tag', 'in', tags).execute();
  }

  /**
   * Only the definitions a call names (most writes carry one or two fields; accounts may have
   * many): the custom fields by name key and the KPI ids that exist, in one round trip.
   */
  async findDefinitions(accountId: string, nameKeys: string[], kpiIds: string[]): Promise<{ fields: FieldDefinition[]; kpiIds: string[] }> {
    if (nameKeys.length === 0 && kpiIds.length === 0) return { fields: [], kpiIds: [] };
    const parts = [];
    if (nameKeys.length > 0) {
      parts.push(sql`select 'field' as kind, id, name, name_key, type from custom_fields where account_id = ${accountId} and name_key in (${sql.join(nameKeys)})`);
    }
    if (kpiIds.length > 0) {
      parts.push(sql`select 'kpi' as kind, kpi_id as id, null as name, null as name_key, null as type from kpis where account_id = ${accountId} and kpi_id in (${sql.join(kpiIds)})`);
    }
    const { rows } = await sql<FieldDefinition & { kind: 'field' | 'kpi' }>`${sql.join(parts, sql` union all `)}`.execute(this.q);
    return {
      fields: rows.filter((r) => r.kind === 'field').map(({ kind: _, ...field }) => field),
      kpiIds: rows.filter((r) => r.kind === 'kpi').map((r) => r.id),
    };
  }

  async upsertFieldValues(accountId: string, contactId: string, values: { fieldId: string; json: string }[]): Promise<void> {
    await this.q
      .insertInto('contact_field_values')
      .values(values.map((v) => ({ account_id: accountId, contact_id: contactId, field_id: v.fieldId, value: v.json })))
      .onConflict((oc) => oc.columns(['contact_id', 'field_id']).doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
      .execute();
  }

  async clearFieldValues(accountId: string, contactId: string, fieldIds: string[]): Promise<void> {
    await this.q
      .deleteFrom('contact_field_values')
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .where('field_id', 'in', fieldIds)
      .execute();
  }

  /**
   * Adds to the stored totals (micros) in the statement itself, never read-modify-write in
   * code, so concurrent increments all count on both engines. The range check is part of the
   * same statement: an increment that would take a total out of range leaves it as it is.
   * Returns the KPI ids whose totals were written.
   */
  async addKpis(accountId: string, contactId: string, increments: { kpiId: string; micros: number }[]): Promise<string[]> {
    const rows = await this.q
      .insertInto('contact_kpis')
      .values(increments.map((i) => ({ account_id: accountId, contact_id: contactId, kpi_id: i.kpiId, value_micros: i.micros })))
      .onConflict((oc) =>
        oc
          .columns(['contact_id', 'kpi_id'])
          .doUpdateSet({ value_micros: sql<number>`contact_kpis.value_micros + excluded.value_micros` })
          .where(sql<boolean>`contact_kpis.value_micros + excluded.value_micros between ${-KPI_MAX_MICROS} and ${KPI_MAX_MICROS}`),
      )
      .returning('kpi_id')
      .execute();
    return rows.map((r) => r.kpi_id);
  }

  async insertNote(accountId: string, note: { id: string; contactId: string; text: string; createdBy: string; now: number }): Promise<void> {
    await this.q
      .insertInto('contact_notes')
      .values({ id: note.id, account_id: accountId, contact_id: note.contactId, text: note.text, created_by: note.createdBy, created_at: note.now })
      .execute();
  }

  /** Links the visitor to the contact, taking it from whichever contact had it. */
  async linkTracker(accountId: string, tracker: string, contactId: string, now: number): Promise<void> {
    await this.q
      .insertInto('trackers')
      .values({ account_id: accountId, tracker, contact_id: contactId, linked_at: now })
      .onConflict((oc) =>
        oc.columns(['account_id', 'tracker']).doUpdateSet({ contact_id: (eb) => eb.ref('excluded.contact_id'), linked_at: (eb) => eb.ref('excluded.linked_at') }),
      )
      .execute();
  }

  // ---- single look-ups (lead strings, contact show) ----

  async findContactIdById(accountId: string, id: string): Promise<string | undefined> {
    const row = await this.q.selectFrom('contacts').select('id').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    return row?.id;
  }

  async findContactIdByEmail(accountId: string, email: string): Promise<string | undefined> {
    const row = await this.q.selectFrom('contact_emails').select('contact_id').where('account_id', '=', accountId).where('email', '=', email).executeTakeFirst();
    return row?.contact_id;
  }

  async findContactIdByPhone(accountId: string, phone: string): Promise<string | undefined> {
    const row = await this.q.selectFrom('contact_phones').select('contact_id').where('account_id', '=', accountId).where('phone', '=', phone).executeTakeFirst();
    return row?.contact_id;
  }

  async findContactIdByTracker(accountId: string, tracker: string): Promise<string | undefined> {
    const row = await this.q.selectFrom('trackers').select('contact_id').where('account_id', '=', accountId).where('tracker', '=', tracker).executeTakeFirst();
    return row?.contact_id;
  }

  // ---- the whole profile (contact show, webhooks, templates) ----

  async getContact(accountId: string, contactId: string): Promise<ContactsTable | undefined> {
    return this.q.selectFrom('contacts').selectAll().where('account_id', '=', accountId).where('id', '=', contactId).executeTakeFirst();
  }

  async listEmails(accountId: string, contactId: string): Promise<string[]> {
    const rows = await this.q
      .selectFrom('contact_emails')
      .select('email')
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .orderBy('position')
      .execute();
    return rows.map((r) => r.email);
  }

  async listPhones(accountId: string, contactId: string): Promise<string[]> {
    const rows = await this.q
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
  async listTags(accountId: string, contactId: string): Promise<string[]> {
    const rows = await this.q.selectFrom('contact_tags').select(['account_id', 'tag']).where('contact_id', '=', contactId).orderBy('tag').execute();
    return rows.filter((r) => r.account_id === accountId).map((r) => r.tag);
  }

  async listFieldValues(accountId: string, contactId: string): Promise<{ name: string; value: string }[]> {
    return this.q
      .selectFrom('contact_field_values as v')
      .innerJoin('custom_fields as f', 'f.id', 'v.field_id')
      .select(['f.name', 'v.value'])
      .where('v.account_id', '=', accountId)
      .where('f.account_id', '=', accountId)
      .where('v.contact_id', '=', contactId)
      .orderBy('f.name_key')
      .execute();
  }

  async listKpis(accountId: string, contactId: string): Promise<{ kpi_id: string; value_micros: number }[]> {
    return this.q
      .selectFrom('contact_kpis')
      .select(['kpi_id', 'value_micros'])
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .orderBy('kpi_id')
      .execute();
  }

  async listNotes(accountId: string, contactId: string): Promise<{ text: string; created_by: string; created_at: number }[]> {
    return this.q
      .selectFrom('contact_notes')
      .select(['text', 'created_by', 'created_at'])
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async listTrackers(accountId: string, contactId: string): Promise<string[]> {
    const rows = await this.q
      .selectFrom('trackers')
      .select('tracker')
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .orderBy('linked_at')
      .orderBy('tracker')
      .execute();
    return rows.map((r) => r.tracker);
  }

  // The same lists for many contacts at once (the dispatcher's due-time checks), by contact id
  // alone: each table's contact_id index serves it. Every row carries its account_id, and the
  // caller keeps only the rows of the account it asked for; rows come in each list's order.

  async getContacts(contactIds: string[]): Promise<ContactsTable[]> {
    return this.q.selectFrom('contacts').selectAll().where('id', 'in', contactIds).execute();
  }

  async listEmailsOf(contactIds: string[]) {
    return this.q.selectFrom('contact_emails').select(['account_id', 'contact_id', 'email']).where('contact_id', 'in', contactIds).orderBy('contact_id').orderBy('position').execute();
  }

  async listPhonesOf(contactIds: string[]) {
    return this.q.selectFrom('contact_phones').select(['account_id', 'contact_id', 'phone']).where('contact_id', 'in', contactIds).orderBy('contact_id').orderBy('position').execute();
  }

  async listTagsOf(contactIds: string[]) {
    return this.q.selectFrom('contact_tags').select(['account_id', 'contact_id', 'tag']).where('contact_id', 'in', contactIds).orderBy('contact_id').orderBy('tag').execute();
  }

  async listFieldValuesOf(contactIds: string[]) {
    return this.q
      .selectFrom('contact_field_values as v')
      .innerJoin('custom_fields as f', (join) => join.onRef('f.id', '=', 'v.field_id').onRef('f.account_id', '=', 'v.account_id'))
      .select(['v.account_id', 'v.contact_id', 'f.name', 'v.value'])
      .where('v.contact_id', 'in', contactIds)
      .orderBy('v.contact_id')
      .orderBy('f.name_key')
      .execute();
  }

  async listKpisOf(contactIds: string[]) {
    return this.q.selectFrom('contact_kpis').select(['account_id', 'contact_id', 'kpi_id', 'value_micros']).where('contact_id', 'in', contactIds).orderBy('contact_id').orderBy('kpi_id').execute();
  }

  async listNotesOf(contactIds: string[]) {
    return this.q
      .selectFrom('contact_notes')
      .select(['account_id', 'contact_id', 'text', 'created_by', 'created_at'])
      .where('contact_id', 'in', contactIds)
      .orderBy('contact_id')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async listTrackersOf(contactIds: string[]) {
    return this.q
      .selectFrom('trackers')
      .select(['account_id', 'contact_id', 'tracker'])
      .where('contact_id', 'in', contactIds)
      .orderBy('contact_id')
      .orderBy('linked_at')
      .orderBy('tracker')
      .execute();
  }

  /** Number of contacts changed: 0 when the id is unknown in this account. */
  async setFlags(accountId: string, contactId: string, values: { archived?: 0 | 1; opted_out?: 0 | 1; updated_at: number }): Promise<number> {
    const result = await this.q.updateTable('contacts').set(values).where('account_id', '=', accountId).where('id', '=', contactId).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
