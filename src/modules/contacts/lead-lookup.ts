import type { RawBuilder } from 'kysely';
import type { Queryable } from '../../db/queryable.js';
import { type ContactKey, contactIdExpression, findContactId } from './contact-id.repo.js';
import { normalizePhone } from './normalize.js';

// service-spec.md, "How `lead` given as a string is read": digits only counts as a phone from 7 digits on.
const DIGITS_ONLY_PHONE = /^\d{7,}$/;

/**
 * What a `lead` string names in trigger and cancel; undefined when it can name no contact (the
 * caller answers 404 Lead not found). Contains `@`: an email. Starts with `+`, or is 7 or more
 * digits only: a phone (with country code). Anything else: a contact id first, then a visitor
 * (tracker) id. Ids never contain `@`, never start with `+` and are never all digits
 * (decisions.md, Ids), so no contact id is ever read as an address.
 */
function readLeadString(lead: string): ContactKey | undefined {
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

/** The contact a `lead` string names in this account (readLeadString), in one statement; undefined when none. */
export async function findContactIdByLeadString(db: Queryable, accountId: string, lead: string): Promise<string | undefined> {
  const key = readLeadString(lead);
  return key === undefined ? undefined : findContactId(db, accountId, key);
}

/**
 * The same look-up as a scalar SQL expression (null when none), for a caller that embeds it in
 * its own single statement (a cancel, issue 12).
 */
export function contactIdOfLeadString(accountId: string, lead: string): RawBuilder<string | null> {
  return contactIdExpression(accountId, readLeadString(lead));
}
