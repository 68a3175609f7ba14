import type { RawBuilder } from 'kysely';
import type { Queryable } from '../../db/queryable.js';
import { AppError } from '../../errors.js';
import { contactIdSelect } from './contact-id.repo.js';
import * as optOut from './contact-opt-out.repo.js';
import * as repo from './contacts.repo.js';

// Contact ids by what other modules know of a contact (a phone, a visitor id), the flags only operators change,
// and the opt-out a recipient asks for themselves.

/**
 * The account's contact with this phone (E.164, as stored); undefined when none. Used by the
 * WhatsApp callbacks (a STOP message names its sender by phone).
 */
export async function findContactIdByPhone(db: Queryable, accountId: string, phone: string): Promise<string | undefined> {
  return repo.findContactIdByPhone(db, accountId, phone);
}

/**
 * The contact an event names, by its id (leadId) or by a linked visitor id, in this account, as
 * a select of zero or one row (`contact_id`): the caller embeds it in its own single statement
 * (an event's insert, issue 12).
 */
export function contactIdSelectByIdOrTracker(
  accountId: string,
  by: { id: string } | { tracker: string },
): RawBuilder<{ contact_id: string }> {
  return contactIdSelect(accountId, by);
}

/** Item per item, the contact each names (as contactIdSelectByIdOrTracker); two statements for all of them, whatever their number. */
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

/**
 * Opts the contact out on the recipient's own word (an unsubscribe link, a WhatsApp STOP), once:
 * true when this call opted them out, false when they already were (or are unknown), so the
 * caller counts the opt-out once. Moves the contact's version, like every contact write.
 */
export async function optOutContact(db: Queryable, accountId: string, contactId: string, now: number): Promise<boolean> {
  return optOut.optOutContact(db, accountId, contactId, now);
}
