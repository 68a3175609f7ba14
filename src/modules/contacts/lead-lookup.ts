import type { Queryable } from '../../db/queryable.js';
import type { Tx } from '../../db/transaction.js';
import * as repo from './contacts.repo.js';
import type { LeadLookup } from './lead-lookup.repo.js';
import * as lookupRepo from './lead-lookup.repo.js';
import { normalizePhone } from './normalize.js';

// service-spec.md, "How `lead` given as a string is read": digits only counts as a phone from 7 digits on.
const DIGITS_ONLY_PHONE = /^\d{7,}$/;

export type { LeadLookup };

/**
 * How a `lead` string in trigger and cancel is read. Contains `@`: an email. Starts with `+`,
 * or is 7 or more digits only: a phone (with country code). Anything else: a contact id first,
 * then a visitor (tracker) id. Ids never contain `@`, never start with `+` and are never all
 * digits (decisions.md, Ids), so no contact id is ever read as an address.
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

/**
 * The contact a `lead` string names, in this account; undefined when none (the caller
 * answers 404 Lead not found).
 */
export async function findContactIdByLeadString(db: Queryable, accountId: string, lead: string): Promise<string | undefined> {
  const lookup = leadLookupOf(lead);
  if (lookup === undefined) return undefined;
  if ('email' in lookup) return repo.findContactIdByEmail(db, accountId, lookup.email);
  if ('phone' in lookup) return repo.findContactIdByPhone(db, accountId, lookup.phone);
  return (
    (await repo.findContactIdById(db, accountId, lookup.idOrTracker)) ??
    (await repo.findContactIdByTracker(db, accountId, lookup.idOrTracker))
  );
}

/**
 * The same look-up as an SQL expression (the contact's id, or null), for a statement that reads
 * the contact with everything else it needs in one round trip (a trigger on PostgreSQL).
 */
export const contactIdOfLookupSql = (accountId: string, lookup: LeadLookup | undefined) =>
  lookupRepo.contactIdOfLookupSql(accountId, lookup);

/** Locks the contact a `lead` string names (PostgreSQL, inside a transaction); nothing when it names none. */
export const lockContactOfLead = (q: Tx, accountId: string, lookup: LeadLookup | undefined) =>
  lookupRepo.lockContactOfLookup(q, accountId, lookup);
