import type { Queryable } from '../../db/queryable.js';
import type { ContactsTable } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { parseStoredJson } from '../../json-limits.js';
import { iso } from '../../time.js';
import * as repo from './contacts.repo.js';
import type { LeadLookup } from './contacts.schemas.js';
import { microsToNumber } from './kpi-values.js';
import { normalizeAddressLookup } from './lead-input.js';
import { normalizePhone } from './normalize.js';

// Reading contacts: one profile (CLI, admin panel, GET /api/leads), many (the dispatcher's reads).

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
 * The reads of many contacts' profiles, one per table, for contacts given as a list or a subquery:
 * the dispatcher's due-time checks of a claimed batch (due-checks.ts readDueData; the PostgreSQL
 * claim, dispatch-claim.pg.ts).
 */
export function contactProfileQueries(db: Queryable, ids: repo.ContactIds) {
  return {
    rows: repo.getContacts(db, ids),
    emails: repo.listEmailsOf(db, ids),
    phones: repo.listPhonesOf(db, ids),
    tags: repo.listTagsOf(db, ids),
    fieldRows: repo.listFieldValuesOf(db, ids),
    kpiRows: repo.listKpisOf(db, ids),
    noteRows: repo.listNotesOf(db, ids),
    trackers: repo.listTrackersOf(db, ids),
  };
}

type Queries = ReturnType<typeof contactProfileQueries>;
/** The rows those reads answer, each list in its query's order. */
export type ContactProfileRows = { [K in keyof Queries]: Awaited<ReturnType<Queries[K]['execute']>> };

/**
 * The profiles from those rows: keyed by contact id; a contact that is not its account's is
 * absent. Same shape and order as getContactProfile. One assembly whichever engine read the rows.
 */
export function assembleContactProfiles(
  contacts: { accountId: string; contactId: string }[],
  parts: ContactProfileRows,
): Map<string, ContactProfile> {
  const profiles = new Map<string, ContactProfile>();
  const accountOf = new Map(contacts.map((c) => [c.contactId, c.accountId]));
  const { rows, emails, phones, tags, fieldRows, kpiRows, noteRows, trackers } = parts;
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
