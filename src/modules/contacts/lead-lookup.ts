import type { Queryable } from '../../db/queryable.js';
import * as repo from './contacts.repo.js';
import { normalizePhone } from './normalize.js';

// service-spec.md, "How `lead` given as a string is read": digits only counts as a phone from 7 digits on.
const DIGITS_ONLY_PHONE = /^\d{7,}$/;

/**
 * The contact a `lead` string names in trigger and cancel, in this account; undefined when
 * none (the caller answers 404 Lead not found). Contains `@`: an email. Starts with `+`, or
 * is 7 or more digits only: a phone (with country code). Anything else: a contact id first,
 * then a visitor (tracker) id. Ids never contain `@`, never start with `+` and are never all
 * digits (decisions.md, Ids), so no contact id is ever read as an address.
 */
export async function findContactIdByLeadString(db: Queryable, accountId: string, lead: string): Promise<string | undefined> {
  // A `+` in a GET query string arrives as a space; trimming gives the digits-only form back.
  const value = lead.trim();
  if (value === '') return undefined;
  if (value.includes('@')) return repo.findContactIdByEmail(db, accountId, value.toLowerCase());
  if (value.startsWith('+') || DIGITS_ONLY_PHONE.test(value)) {
    const phone = normalizePhone(value);
    return phone === undefined ? undefined : repo.findContactIdByPhone(db, accountId, phone);
  }
  return (await repo.findContactIdById(db, accountId, value)) ?? (await repo.findContactIdByTracker(db, accountId, value));
}
