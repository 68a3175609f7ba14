import type { Db } from '../../db/connect.js';
import type { Queryable } from '../../db/queryable.js';
import { AppError, invalid } from '../../errors.js';
import { DEFAULT_PAGE, decodeCursor, type Position } from '../../http/paging.js';
import { newId } from '../../ids.js';
import { iso } from '../../time.js';
import { type ActivityItem, listActivity, testSendIds } from '../activity/activity.service.js';
import { liftSuppression, type Suppression, suppressionsOf } from '../suppressions/suppressions.service.js';
import type { ContactCondition, ContactFilter, ContactPage, ContactQuery } from './contact-search.repo.js';
import * as search from './contact-search.repo.js';
import * as repo from './contacts.repo.js';
import { type ContactProfile, getContactProfile, setContactFlags } from './contacts.service.js';
import { MAX_NOTE_TEXT } from './lead-input.js';
import { normalizePhone, normalizeTag } from './normalize.js';

export type { ContactCondition, ContactListItem, ContactPage } from './contact-search.repo.js';

/** The contact list and the contact page of the admin panel: the rules; the SQL is in contact-search.repo.ts. */

export interface ContactSearch {
  q?: string;
  tag?: string;
  /** true: the archived contacts only; otherwise the listed ones (archived contacts are hidden). */
  archived?: boolean;
  optedOut?: boolean;
  limit?: number;
  cursor?: string;
}

// The `lead` string rule of the spec: `+`, or 7 digits and more (separators allowed when typed in a search box).
const PHONE_LIKE = /^\+|^[\d\s().-]*\d[\d\s().-]*$/;

/**
 * What `q` matches: phone-like (and no `@`), a phone read the way the API reads a `lead`
 * string (exact, E.164); anything else, text found anywhere in the name or in one of the
 * emails, ignoring case. Undefined when `q` is blank (no condition).
 */
export function readContactQuery(raw: string): ContactQuery | undefined {
  const q = raw.trim();
  if (q === '') return undefined;
  if (!q.includes('@') && PHONE_LIKE.test(q) && (q.startsWith('+') || q.replace(/\D/g, '').length >= 7)) {
    const phone = normalizePhone(q);
    return phone === undefined ? 'nothing' : { phone };
  }
  return { text: q };
}

/** The list's filters in stored form (tag normalised, `q` read). */
export function contactFilter(params: ContactSearch): ContactFilter {
  return {
    archived: params.archived === true,
    optedOut: params.optedOut,
    tag: params.tag === undefined ? undefined : normalizeTag(params.tag),
    query: params.q === undefined ? undefined : readContactQuery(params.q),
  };
}

/**
 * `GET /admin/api/contacts`: the contact list with its filters, newest first, one page; its CSV
 * export reads every page. A search for text scans the account's contacts and their emails
 * (46 ms for part of an email at 100,000 contacts, linear beyond), and an export reads them
 * all: off SQLite's event loop (db.reads), like the list's count.
 */
export async function searchContacts(db: Db, accountId: string, params: ContactSearch): Promise<ContactPage> {
  return search.searchContacts(db.reads, accountId, db.engine, contactFilter(params), {
    limit: params.limit ?? DEFAULT_PAGE,
    after: decodeCursor(params.cursor),
  });
}

/** `GET /admin/api/contacts/count`: how many contacts the list's filters match, all pages together. */
export async function countContacts(db: Db, accountId: string, params: ContactSearch): Promise<{ count: number }> {
  // A count may read every contact of the account: off SQLite's event loop (db.reads).
  return { count: await search.countContacts(db.reads, accountId, db.engine, contactFilter(params)) };
}

/**
 * The account's contacts meeting every condition, newest first, one keyset page: a segment's
 * contacts (its conditions are compiled by segment-criteria.repo.ts).
 */
export async function pageContactsWhere(
  db: Queryable,
  accountId: string,
  conditions: ContactCondition[],
  page: { limit: number; after?: Position },
): Promise<ContactPage> {
  return search.pageContacts(db, accountId, conditions, page);
}

/** The contact page's profile: `herald contact show`'s, with its addresses that bounced. */
export type AdminContactProfile = ContactProfile & {
  suppressed: (Pick<Suppression, 'channel' | 'address' | 'reason'> & { createdAt: string })[];
};

/** The `herald contact show` profile and its bounced addresses, or 404 Lead not found (another account's id included). */
export async function contactProfile(db: Db, accountId: string, contactId: string): Promise<AdminContactProfile> {
  const profile = await getContactProfile(db, accountId, { id: contactId });
  if (!profile) throw new AppError('LEAD_NOT_FOUND');
  const suppressed = await suppressionsOf(db, accountId, [...profile.emails, ...profile.phones]);
  return {
    ...profile,
    suppressed: suppressed.map(({ channel, address, reason, createdAt }) => ({ channel, address, reason, createdAt: iso(createdAt) })),
  };
}

/**
 * Lifts the suppression of one of the contact's addresses (the mailbox works again): later
 * sends to it are tried. 404 when the address is not the contact's or is not suppressed.
 */
export async function liftContactSuppression(db: Db, accountId: string, contactId: string, address: string): Promise<AdminContactProfile> {
  const profile = await contactProfile(db, accountId, contactId);
  const entry = profile.suppressed.find((s) => s.address === address);
  if (!entry || !(await liftSuppression(db, accountId, entry.channel, entry.address)))
    throw new AppError('NOT_FOUND', { message: 'Address is not suppressed' });
  return contactProfile(db, accountId, contactId);
}

export async function updateContactFlags(
  db: Db,
  accountId: string,
  contactId: string,
  flags: { archived?: boolean; optedOut?: boolean },
): Promise<AdminContactProfile> {
  await setContactFlags(db, accountId, contactId, flags);
  return contactProfile(db, accountId, contactId);
}

/**
 * A note written in the panel, signed with the user's email. Unlike a note sent through the
 * API, it is not a contact write: an archived contact stays archived.
 */
export async function addNote(db: Db, accountId: string, contactId: string, rawText: string, createdBy: string) {
  const text = rawText.trim();
  if (text === '') throw invalid('/text', 'must not be empty');
  if (text.length > MAX_NOTE_TEXT) throw invalid('/text', `must be at most ${MAX_NOTE_TEXT} characters`);
  if ((await repo.findContactIdById(db, accountId, contactId)) === undefined) throw new AppError('LEAD_NOT_FOUND');
  const now = Date.now();
  await repo.insertNote(db, accountId, { id: newId('nt'), contactId, text, createdBy, now });
  return { text, createdBy, createdAt: iso(now) };
}

/**
 * The activity feed, with each admin panel test send marked `test: true` so the panel can
 * tell it from a real one (one query over the page's sends).
 */
export async function contactActivity(db: Db, accountId: string, contactId: string, options: { before?: number; limit?: number }) {
  const { items } = await listActivity(db, accountId, contactId, options);
  const tests = await testSendIds(
    db,
    accountId,
    items.flatMap((item) => (item.kind === 'send' ? [item.sendId] : [])),
  );
  return { items: items.map((item): ActivityItem => (item.kind === 'send' && tests.has(item.sendId) ? { ...item, test: true } : item)) };
}
