import type { Db } from '../../db/connect.js';
import { applyEach, applyEachInTransaction, type ItemOutcome } from '../../db/item-transactions.js';
import type { Queryable } from '../../db/queryable.js';
import type { ContactsTable } from '../../db/schema.js';
import { inTransaction, type Tx, withUniqueRetry } from '../../db/transaction.js';
import { AppError, type Problem } from '../../errors.js';
import { newId } from '../../ids.js';
import { parseStoredJson } from '../../json-limits.js';
import { iso } from '../../time.js';
import { type IdempotentBatch, type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import type { FieldDefinition, IdentifierOwners } from './contacts.repo.js';
import * as repo from './contacts.repo.js';
import type { LeadInput, LeadLookup, LeadResult } from './contacts.schemas.js';
import { parseFieldValue, type StoredFieldValue } from './field-values.js';
import { KPI_RANGE_TEXT, microsToNumber, parseKpiIncrement } from './kpi-values.js';
import { MAX_METADATA_BYTES, metadataTooLarge, type NormalizedLead, normalizeAddressLookup, normalizeLead } from './lead-input.js';
import { normalizePhone, pointerSegment } from './normalize.js';

/** The 200 body of `POST /api/leads`, also what a trigger with a `lead` object gets back. */
export type ContactWriteResult = LeadResult;

/**
 * Creates or updates one contact with every rule of service-spec.md (Contact) and
 * decisions.md (Contacts). Runs inside the caller's transaction, so the campaign trigger can
 * write the contact and its send atomically; throws AppError (400 Validation Error, 409
 * Identifier belongs to another contact) before or instead of committing anything.
 * `at` is the JSON pointer of the lead object in the request (`/lead` in a trigger): every
 * path in `details` and `warnings` starts with it.
 */
export async function applyContactWrite(tx: Tx, accountId: string, input: LeadInput, now: number, at = ''): Promise<ContactWriteResult> {
  const lead = normalizeLead(input, at);
  const found = await findAndTouch(tx, accountId, lead, now);
  const contactId = found?.contactId ?? newId('ld');
  if (found === undefined) {
    await createContact(tx, accountId, contactId, lead, input.metadata, now, at);
  } else {
    if (input.metadata !== undefined) await mergeMetadata(tx, accountId, contactId, found.storedMetadata, input.metadata, at);
    if (lead.email !== undefined && found.owners.byEmail === undefined) await repo.addEmail(tx, accountId, contactId, lead.email);
    if (lead.phone !== undefined && found.owners.byPhone === undefined) await repo.addPhone(tx, accountId, contactId, lead.phone);
    if (lead.tagsRemove?.length) await repo.removeTags(tx, accountId, contactId, lead.tagsRemove);
  }
  if (lead.tagsAdd?.length) await repo.addTags(tx, accountId, contactId, lead.tagsAdd);

  const warnings: Problem[] = [];
  const definitions = await repo.findDefinitions(
    tx,
    accountId,
    [...new Set((input.fields ?? []).map((e) => fieldNameKey(e.key)))],
    Object.keys(input.kpis ?? {}),
  );
  const fields =
    input.fields === undefined ? undefined : await applyFields(tx, accountId, contactId, input.fields, definitions.fields, warnings, at);
  const kpis =
    input.kpis === undefined ? undefined : await applyKpis(tx, accountId, contactId, input.kpis, definitions.kpiIds, warnings, at);
  if (lead.note) await repo.insertNote(tx, accountId, { id: newId('nt'), contactId, ...lead.note, now });
  if (input.tracker !== undefined) await repo.linkTracker(tx, accountId, input.tracker, contactId, now);

  return echo(contactId, found === undefined, lead, input, { fields, kpis }, warnings);
}

interface FoundContact {
  contactId: string;
  /** The metadata as stored before this write, read under the row lock. */
  storedMetadata: string;
  /** Which contact each sent identifier already belonged to (all this one, by then). */
  owners: IdentifierOwners;
}

/**
 * Lookup order id -> email -> phone: the first identifier that matches decides; another sent
 * identifier owned by a different contact is a 409 before anything is written. The contact
 * found is touched at once (listed again, renamed, stamped), which also locks its row.
 * Undefined when nothing matches: the write creates the contact.
 */
async function findAndTouch(q: Queryable, accountId: string, lead: NormalizedLead, now: number): Promise<FoundContact | undefined> {
  const change = { name: lead.name, now };
  const sent = [lead.id !== undefined, lead.email !== undefined, lead.phone !== undefined].filter(Boolean).length;
  if (sent === 1) {
    // One identifier cannot conflict with another: find and touch in a single statement.
    const by = lead.id !== undefined ? { id: lead.id } : lead.email !== undefined ? { email: lead.email } : { phone: lead.phone! };
    const row = await repo.touchContactBy(q, accountId, by, change);
    if (row === undefined) return undefined;
    const owners = 'email' in by ? { byEmail: row.id } : 'phone' in by ? { byPhone: row.id } : { byId: row.id };
    return { contactId: row.id, storedMetadata: row.metadata, owners };
  }
  const owners = await repo.findOwners(q, accountId, lead);
  const existing = owners.byId ?? owners.byEmail ?? owners.byPhone;
  if ((owners.byEmail !== undefined && owners.byEmail !== existing) || (owners.byPhone !== undefined && owners.byPhone !== existing)) {
    throw new AppError('IDENTIFIER_CONFLICT');
  }
  if (existing === undefined) return undefined;
  const storedMetadata = await repo.touchContact(q, accountId, existing, change);
  if (storedMetadata === undefined) throw new Error(`contact ${existing} vanished during its own write`);
  return { contactId: existing, storedMetadata, owners };
}

/**
 * `POST /api/leads`: one transaction; a lost race on a new address retries and then updates.
 * With an Idempotency-Key the answer is stored in that transaction (oncePerKey).
 */
export async function writeContact(db: Db, accountId: string, input: LeadInput, key?: IdempotentRequest): Promise<ContactWriteResult> {
  return withUniqueRetry(() => inTransaction(db, (tx) => oncePerKey(tx, key, () => applyContactWrite(tx, accountId, input, Date.now()))));
}

/**
 * `POST /api/leads/batch`: each item exactly as `writeContact` (applyContactWrite, the same
 * rules), in order, so an item sees the items before it (the same email twice: the second
 * updates the contact the first created); as few transactions as the engine allows
 * (db/item-transactions.ts). One outcome per item: a failed item changed nothing.
 */
export async function writeContacts(
  db: Db,
  accountId: string,
  inputs: readonly LeadInput[],
  keyed?: IdempotentBatch<ItemOutcome<ContactWriteResult>[]>,
): Promise<ItemOutcome<ContactWriteResult>[]> {
  const apply = (tx: Tx, input: LeadInput) => applyContactWrite(tx, accountId, input, Date.now());
  if (!keyed) return applyEach(db, inputs, apply);
  // With an Idempotency-Key the whole batch is one transaction: its answer is stored with all of it.
  return inTransaction(db, (tx) => oncePerKey(tx, keyed.request, () => applyEachInTransaction(tx, inputs, apply), keyed.answer));
}

async function createContact(
  q: Queryable,
  accountId: string,
  contactId: string,
  lead: NormalizedLead,
  metadata: Record<string, unknown> | undefined,
  now: number,
  at: string,
): Promise<void> {
  const problems: Problem[] = [];
  if (lead.name === undefined) problems.push({ path: `${at}/name`, message: 'is required to create a contact (at least 2 characters)' });
  if (lead.email === undefined && lead.phone === undefined) {
    problems.push({ path: `${at}/email`, message: 'an email or a phone is required to create a contact' });
  }
  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
  await repo.insertContact(q, accountId, {
    id: contactId,
    name: lead.name!,
    archived: 0,
    opted_out: 0,
    metadata: JSON.stringify(metadata ?? {}),
    created_at: now,
    updated_at: now,
  });
  if (lead.email !== undefined) await repo.addEmail(q, accountId, contactId, lead.email);
  if (lead.phone !== undefined) await repo.addPhone(q, accountId, contactId, lead.phone);
}

/** Shallow merge: keys sent replace stored ones (null included), keys not sent stay. */
async function mergeMetadata(
  q: Queryable,
  accountId: string,
  contactId: string,
  stored: string,
  sent: Record<string, unknown>,
  at: string,
): Promise<void> {
  // Spread, not Object.assign, so a `__proto__` key stays plain data. Stored keys deeper than
  // the nesting limit (written before it existed) are cut, like on every read.
  const merged = JSON.stringify({ ...parseStoredJson<Record<string, unknown>>(stored), ...sent });
  if (Buffer.byteLength(merged, 'utf8') > MAX_METADATA_BYTES) throw new AppError('VALIDATION', { details: [metadataTooLarge(at)] });
  await repo.setMetadata(q, accountId, contactId, merged);
}

type FieldEcho = { key: string; value: StoredFieldValue | null }[];

/** Field keys match definitions by name, ignoring case and surrounding spaces. */
const fieldNameKey = (key: string) => key.trim().toLowerCase();

/** Known fields in a valid format are set or cleared; the rest become warnings. */
async function applyFields(
  q: Queryable,
  accountId: string,
  contactId: string,
  entries: { key: string; value: unknown }[],
  definitions: FieldDefinition[],
  warnings: Problem[],
  at: string,
): Promise<FieldEcho> {
  if (entries.length === 0) return [];
  const byKey = new Map(definitions.map((d) => [d.name_key, d]));
  // Keyed by field: when a call names a field twice, the last valid entry wins.
  const applied = new Map<string, { key: string; value: StoredFieldValue | null }>();
  entries.forEach((entry, i) => {
    const definition = byKey.get(fieldNameKey(entry.key));
    if (!definition) {
      warnings.push({ path: `${at}/fields/${i}`, message: `unknown custom field '${entry.key}'` });
      return;
    }
    const result = parseFieldValue(definition.type, entry.value);
    if (result.kind === 'invalid') {
      warnings.push({ path: `${at}/fields/${i}`, message: `value of custom field '${definition.name}' ${result.message}` });
      return;
    }
    applied.set(definition.id, { key: definition.name, value: result.kind === 'set' ? result.value : null });
  });

  const sets = [...applied].filter(([, v]) => v.value !== null).map(([fieldId, v]) => ({ fieldId, json: JSON.stringify(v.value) }));
  const clears = [...applied].filter(([, v]) => v.value === null).map(([fieldId]) => fieldId);
  if (sets.length > 0) await repo.upsertFieldValues(q, accountId, contactId, sets);
  if (clears.length > 0) await repo.clearFieldValues(q, accountId, contactId, clears);
  return [...applied.values()];
}

/**
 * Known KPIs with a numeric value are added to the stored totals; the rest become warnings,
 * and so does an increment that would take its total out of range (decisions.md, Limits).
 */
async function applyKpis(
  q: Queryable,
  accountId: string,
  contactId: string,
  sent: Record<string, unknown>,
  knownIds: string[],
  warnings: Problem[],
  at: string,
): Promise<Record<string, number>> {
  const entries = Object.entries(sent);
  if (entries.length === 0) return {};
  const known = new Set(knownIds);
  const increments: { kpiId: string; micros: number }[] = [];
  const pathOf = (kpiId: string) => `${at}/kpis/${pointerSegment(kpiId)}`;
  for (const [kpiId, raw] of entries) {
    const increment = parseKpiIncrement(raw);
    if (!known.has(kpiId)) warnings.push({ path: pathOf(kpiId), message: `unknown KPI '${kpiId}'` });
    else if ('micros' in increment) increments.push({ kpiId, micros: increment.micros });
    else if (increment.problem === 'not a number')
      warnings.push({ path: pathOf(kpiId), message: `value of KPI '${kpiId}' must be a number` });
    else warnings.push({ path: pathOf(kpiId), message: `value of KPI '${kpiId}' must be within ${KPI_RANGE_TEXT}` });
  }
  if (increments.length === 0) return {};
  const added = new Set(await repo.addKpis(q, accountId, contactId, increments));
  for (const { kpiId } of increments) {
    if (!added.has(kpiId))
      warnings.push({ path: pathOf(kpiId), message: `KPI '${kpiId}' not added: its total would leave ${KPI_RANGE_TEXT}` });
  }
  return Object.fromEntries(increments.filter((i) => added.has(i.kpiId)).map((i) => [i.kpiId, microsToNumber(i.micros)]));
}

/** The members that were sent, in their stored form (decisions.md, Response 200). */
function echo(
  id: string,
  created: boolean,
  lead: NormalizedLead,
  input: LeadInput,
  applied: { fields?: FieldEcho; kpis?: Record<string, number> },
  warnings: Problem[],
): ContactWriteResult {
  const result: ContactWriteResult = { id, created, warnings };
  if (lead.email !== undefined) result.email = lead.email;
  if (lead.phone !== undefined) result.phone = lead.phone;
  if (lead.name !== undefined) result.name = lead.name;
  if (lead.tagsAdd !== undefined) result.tags = lead.tagsAdd;
  if (lead.tagsRemove !== undefined) result.tagsRemove = lead.tagsRemove;
  if (applied.fields !== undefined) result.fields = applied.fields;
  if (applied.kpis !== undefined) result.kpis = applied.kpis;
  if (input.metadata !== undefined) result.metadata = input.metadata;
  if (lead.note !== undefined) result.note = lead.note;
  if (input.tracker !== undefined) result.tracker = input.tracker;
  return result;
}

// ---- reading a contact, and the flags only operators change ----

/** The `herald contact show` shape of interfaces.md. */
export interface ContactProfile {
  id: string;
  name: string;
  emails: string[];
  phones: string[];
  tags: string[];
  fields: Record<string, unknown>;
  kpis: Record<string, number>;
  metadata: Record<string, unknown>;
  notes: { text: string; createdBy: string; createdAt: string }[];
  trackers: string[];
  archived: boolean;
  optedOut: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Finds the contact by the first of id, email, phone given; undefined when none matches in this account. */
export async function getContactProfile(
  db: Queryable,
  accountId: string,
  lookup: { id?: string; email?: string; phone?: string },
): Promise<ContactProfile | undefined> {
  // By id the contact row itself is the look-up; by address, the address table gives the id.
  const contactId = lookup.id ?? (await findByLookup(db, accountId, lookup));
  const contact = contactId === undefined ? undefined : await repo.getContact(db, accountId, contactId);
  if (!contact) return undefined;
  const [emails, phones, tags, fieldRows, kpiRows, noteRows, trackers] = await Promise.all([
    repo.listEmails(db, accountId, contact.id),
    repo.listPhones(db, accountId, contact.id),
    repo.listTags(db, accountId, contact.id),
    repo.listFieldValues(db, accountId, contact.id),
    repo.listKpis(db, accountId, contact.id),
    repo.listNotes(db, accountId, contact.id),
    repo.listTrackers(db, accountId, contact.id),
  ]);
  return toProfile(contact, { emails, phones, tags, fieldRows, kpiRows, noteRows, trackers });
}

/** `GET /api/leads/{id}`: this account's contact, or LEAD_NOT_FOUND (another account's id is as unknown as a made-up one). */
export async function readContactById(db: Queryable, accountId: string, contactId: string): Promise<ContactProfile> {
  const profile = await getContactProfile(db, accountId, { id: contactId });
  if (!profile) throw new AppError('LEAD_NOT_FOUND');
  return profile;
}

/** `GET /api/leads?email=|phone=`: the contact holding that address in this account, or LEAD_NOT_FOUND. */
export async function readContactByAddress(db: Queryable, accountId: string, query: LeadLookup): Promise<ContactProfile> {
  const profile = await getContactProfile(db, accountId, normalizeAddressLookup(query));
  if (!profile) throw new AppError('LEAD_NOT_FOUND');
  return profile;
}

/**
 * The profiles of many contacts (each given with its account), read with one statement per
 * table for all of them: the dispatcher's due-time checks of a claimed batch. Keyed by contact
 * id; a contact that is not its account's is absent. Same shape and order as getContactProfile.
 */
export async function getContactProfiles(
  db: Queryable,
  contacts: { accountId: string; contactId: string }[],
): Promise<Map<string, ContactProfile>> {
  const profiles = new Map<string, ContactProfile>();
  if (contacts.length === 0) return profiles;
  const accountOf = new Map(contacts.map((c) => [c.contactId, c.accountId]));
  const ids = [...accountOf.keys()];
  const [rows, emails, phones, tags, fieldRows, kpiRows, noteRows, trackers] = await Promise.all([
    repo.getContacts(db, ids),
    repo.listEmailsOf(db, ids),
    repo.listPhonesOf(db, ids),
    repo.listTagsOf(db, ids),
    repo.listFieldValuesOf(db, ids),
    repo.listKpisOf(db, ids),
    repo.listNotesOf(db, ids),
    repo.listTrackersOf(db, ids),
  ]);
  // Rows of another account than the one asked for are dropped (tenant isolation).
  const group = <R extends { account_id: string; contact_id: string }, V>(list: R[], value: (r: R) => V) => {
    const by = new Map<string, V[]>();
    for (const r of list) {
      if (accountOf.get(r.contact_id) !== r.account_id) continue;
      const values = by.get(r.contact_id);
      if (values) values.push(value(r));
      else by.set(r.contact_id, [value(r)]);
    }
    return (contactId: string) => by.get(contactId) ?? [];
  };
  const emailsOf = group(emails, (r) => r.email);
  const phonesOf = group(phones, (r) => r.phone);
  const tagsOf = group(tags, (r) => r.tag);
  const fieldsOf = group(fieldRows, (r) => r);
  const kpisOf = group(kpiRows, (r) => r);
  const notesOf = group(noteRows, (r) => r);
  const trackersOf = group(trackers, (r) => r.tracker);
  for (const contact of rows) {
    if (accountOf.get(contact.id) !== contact.account_id) continue;
    const id = contact.id;
    profiles.set(
      id,
      toProfile(contact, {
        emails: emailsOf(id),
        phones: phonesOf(id),
        tags: tagsOf(id),
        fieldRows: fieldsOf(id),
        kpiRows: kpisOf(id),
        noteRows: notesOf(id),
        trackers: trackersOf(id),
      }),
    );
  }
  return profiles;
}

function toProfile(
  contact: ContactsTable,
  parts: {
    emails: string[];
    phones: string[];
    tags: string[];
    fieldRows: { name: string; value: string }[];
    kpiRows: { kpi_id: string; value_micros: number }[];
    noteRows: { text: string; created_by: string; created_at: number }[];
    trackers: string[];
  },
): ContactProfile {
  const { emails, phones, tags, fieldRows, kpiRows, noteRows, trackers } = parts;
  return {
    id: contact.id,
    name: contact.name,
    emails,
    phones,
    tags,
    fields: Object.fromEntries(fieldRows.map((f) => [f.name, parseStoredJson(f.value)])),
    kpis: Object.fromEntries(kpiRows.map((k) => [k.kpi_id, microsToNumber(Number(k.value_micros))])),
    metadata: parseStoredJson<Record<string, unknown>>(contact.metadata),
    notes: noteRows.map((n) => ({ text: n.text, createdBy: n.created_by, createdAt: iso(Number(n.created_at)) })),
    trackers,
    archived: contact.archived === 1,
    optedOut: contact.opted_out === 1,
    createdAt: iso(Number(contact.created_at)),
    updatedAt: iso(Number(contact.updated_at)),
  };
}

async function findByLookup(q: Queryable, accountId: string, lookup: { id?: string; email?: string; phone?: string }) {
  if (lookup.email !== undefined) return repo.findContactIdByEmail(q, accountId, lookup.email.trim().toLowerCase());
  if (lookup.phone !== undefined) {
    const phone = normalizePhone(lookup.phone);
    return phone === undefined ? undefined : repo.findContactIdByPhone(q, accountId, phone);
  }
  return undefined;
}

/**
 * The account's contact with this phone (E.164, as stored); undefined when none. Used by the
 * WhatsApp callbacks (a STOP message names its sender by phone).
 */
export async function findContactIdByPhone(db: Queryable, accountId: string, phone: string): Promise<string | undefined> {
  return repo.findContactIdByPhone(db, accountId, phone);
}

/** The contact an event names, by its id (leadId) or by a linked visitor id; undefined when not in this account. */
export async function findContactIdByIdOrTracker(
  db: Queryable,
  accountId: string,
  by: { id: string } | { tracker: string },
): Promise<string | undefined> {
  return 'id' in by ? repo.findContactIdById(db, accountId, by.id) : repo.findContactIdByTracker(db, accountId, by.tracker);
}

/** Item per item, the contact each names (as findContactIdByIdOrTracker); two statements for all of them, whatever their number. */
export async function findContactIdsByIdOrTracker(
  db: Queryable,
  accountId: string,
  items: ({ id: string } | { tracker: string })[],
): Promise<(string | undefined)[]> {
  const ids = [...new Set(items.flatMap((by) => ('id' in by ? [by.id] : [])))];
  const trackers = [...new Set(items.flatMap((by) => ('tracker' in by ? [by.tracker] : [])))];
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += IN_LIST_MAX) {
    for (const id of await repo.findContactIdsByIds(db, accountId, ids.slice(i, i + IN_LIST_MAX))) found.add(id);
  }
  const byTracker = new Map<string, string>();
  for (let i = 0; i < trackers.length; i += IN_LIST_MAX) {
    for (const [tracker, id] of await repo.findContactIdsByTrackers(db, accountId, trackers.slice(i, i + IN_LIST_MAX)))
      byTracker.set(tracker, id);
  }
  return items.map((by) => ('id' in by ? (found.has(by.id) ? by.id : undefined) : byTracker.get(by.tracker)));
}

/** Values in one IN list: well under SQLite's and PostgreSQL's limits on bound parameters. */
const IN_LIST_MAX = 500;

/** Whether the contact exists in this account (another account's id is as unknown as a made-up one). */
export async function contactExists(db: Queryable, accountId: string, contactId: string): Promise<boolean> {
  return (await repo.findContactIdById(db, accountId, contactId)) !== undefined;
}

/** Archive/list and opt out/in (CLI, admin panel). Another account's id is LEAD_NOT_FOUND, like an unknown one. */
export async function setContactFlags(
  db: Queryable,
  accountId: string,
  contactId: string,
  flags: { archived?: boolean; optedOut?: boolean },
): Promise<void> {
  const values: { archived?: 0 | 1; opted_out?: 0 | 1; updated_at: number } = { updated_at: Date.now() };
  if (flags.archived !== undefined) values.archived = flags.archived ? 1 : 0;
  if (flags.optedOut !== undefined) values.opted_out = flags.optedOut ? 1 : 0;
  const found =
    flags.archived === undefined && flags.optedOut === undefined
      ? (await repo.findContactIdById(db, accountId, contactId)) !== undefined
      : (await repo.setFlags(db, accountId, contactId, values)) > 0;
  if (!found) throw new AppError('LEAD_NOT_FOUND');
}
