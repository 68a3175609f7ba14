import type { RawBuilder } from 'kysely';
import type { Queryable } from '../../db/queryable.js';
import type { Tx } from '../../db/transaction.js';
import { type ContactKey, contactIdExpression, findContactId, lockContactOf } from './contact-id.repo.js';
import { normalizePhone } from './normalize.js';

// service-spec.md, "How `lead` given as a string is read": digits only counts as a phone from 7 digits on.
const DIGITS_ONLY_PHONE = /^\d{7,}$/;

/** How a `lead` string is looked up. */
export type LeadLookup = Extract<ContactKey, { email: string } | { phone: string } | { idOrTracker: string }>;

/**
 * What a `lead` string names in trigger and cancel; undefined when it can name no contact (the
 * caller answers 404 Lead not found). Contains `@`: an email. Starts with `+`, or is 7 or more
 * digits only: a phone (with country code). Anything else: a contact id first, then a visitor
 * (tracker) id. Ids never contain `@`, never start with `+` and are never all digits
 * (decisions.md, Ids), so no contact id is ever read as an address.
 */
export function leadLookupOf(lead: string): LeadLookup | undefined {
  // A `+` in a GET query string arrives as a space; trimming gives the digits-only form back.
  const value = lead.trim();
  if (value === '') return undefined;
  if (value.includes('@')) return { email: value.toLowerCase() };
  if (value.startsWith('+') || DIGITS_ONLY_PHONE.test(value)) {
    const phone = normalizePhone(value);
    return phone === undefined ? undefined : { phone };
  }
  return { idOrTracker: value };
}

/** A look-up's one key and its value: names a statement's shape (db/constant-statements.ts) by how the contact is named. */
export function lookupEntry(lookup: LeadLookup): ['email' | 'phone' | 'idOrTracker', string] {
  if ('email' in lookup) return ['email', lookup.email];
  if ('phone' in lookup) return ['phone', lookup.phone];
  return ['idOrTracker', lookup.idOrTracker];
}

/** The contact a `lead` string names in this account (leadLookupOf), in one statement; undefined when none. */
export async function findContactIdByLeadString(db: Queryable, accountId: string, lead: string): Promise<string | undefined> {
  const lookup = leadLookupOf(lead);
  return lookup === undefined ? undefined : findContactId(db, accountId, lookup);
}

/**
 * The same look-up as a scalar SQL expression (null when none), for a caller that embeds it in
 * its own single statement (a trigger's read, a cancel, issue 12).
 */
export function contactIdOfLookupSql(accountId: string, lookup: LeadLookup | undefined): RawBuilder<string | null> {
  return contactIdExpression(accountId, lookup);
}

/** Locks the contact a `lead` string names (PostgreSQL, inside a transaction); nothing when it names none. */
export async function lockContactOfLead(q: Tx, accountId: string, lookup: LeadLookup | undefined): Promise<void> {
  if (lookup !== undefined) await lockContactOf(q, accountId, lookup);
}
