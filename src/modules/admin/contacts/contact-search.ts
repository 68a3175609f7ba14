import { sql } from 'kysely';
import type { Db, Engine } from '../../../db/connect.js';
import { normalizePhone, normalizeTag } from '../../contacts/normalize.js';
import { decodeCursor, DEFAULT_PAGE } from '../../../http/paging.js';
import { pageContacts, type ContactCondition, type ContactPage } from './contact-list.js';

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

/** A condition no row meets: a search for an address that cannot exist finds nothing. */
const NOTHING = sql`1 = 0`;

/**
 * What `q` matches, read the way the API reads a `lead` string: with `@` an email (exact,
 * in stored form), phone-like a phone (exact, E.164), anything else the start of a word of
 * the name, ignoring case. An address names at most one contact: `c.id = (subquery)` makes
 * both engines look it up by primary key rather than scan the account.
 */
export function queryCondition(engine: Engine, accountId: string, raw: string): ContactCondition | undefined {
  const q = raw.trim();
  if (q === '') return undefined;
  if (q.includes('@')) {
    return sql`c.id = (select contact_id from contact_emails where account_id = ${accountId} and email = ${q.toLowerCase()})`;
  }
  if (PHONE_LIKE.test(q) && (q.startsWith('+') || q.replace(/\D/g, '').length >= 7)) {
    const phone = normalizePhone(q);
    return phone === undefined ? NOTHING : sql`c.id = (select contact_id from contact_phones where account_id = ${accountId} and phone = ${phone})`;
  }
  return namePrefix(engine, q);
}

/**
 * The name starts with q, or a word of it does (after a space or a hyphen): "ada", "love"
 * and "ada love" all find "Ada Lovelace". One LIKE per contact on the name with hyphens made
 * spaces and a space in front, so a word start is always " q". Case: PostgreSQL compares
 * both sides lowercased (lower() knows Unicode); SQLite's LIKE ignores the case of ASCII
 * letters itself (SQLite has no Unicode case folding built in).
 *
 * No index serves a word prefix: the newest-first scan of the account's contacts (the index
 * contacts_list, which holds the names) stops as soon as a page is full, and reads every
 * contact of the account when fewer match. That costs tens of milliseconds at 100,000
 * contacts (bench/admin-queries.ts) and needs no derived data kept in step with every
 * contact write, which a table of name words would.
 */
function namePrefix(engine: Engine, q: string): ContactCondition {
  // Hyphens in the search are spaces too, so "jean-luc" still finds "Jean-Luc".
  const pattern = `% ${q.replace(/-/g, ' ').replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return engine === 'postgres'
    ? sql`(' ' || replace(lower(c.name), '-', ' ')) like lower(${pattern}) escape '\\'`
    : sql`(' ' || replace(c.name, '-', ' ')) like ${pattern} escape '\\'`;
}

/**
 * The contact has the tag. The tag's contacts are read once (index contact_tags_account_tag)
 * and each listed contact is checked against them, so a page costs the tag's size plus the
 * contacts scanned, never a seek per contact.
 */
export function tagCondition(accountId: string, tag: string): ContactCondition {
  return sql`c.id in (select contact_id from contact_tags where account_id = ${accountId} and tag = ${tag})`;
}

/** `GET /admin/api/contacts`: the contact list with its filters, newest first, one page. */
export async function searchContacts(db: Db, accountId: string, search: ContactSearch): Promise<ContactPage> {
  const conditions: ContactCondition[] = [sql`c.archived = ${search.archived === true ? 1 : 0}`];
  if (search.optedOut !== undefined) conditions.push(sql`c.opted_out = ${search.optedOut ? 1 : 0}`);
  if (search.tag !== undefined) {
    const tag = normalizeTag(search.tag);
    conditions.push(tag === '' ? NOTHING : tagCondition(accountId, tag));
  }
  const query = search.q === undefined ? undefined : queryCondition(db.engine, accountId, search.q);
  if (query) conditions.push(query);
  return pageContacts(db.kysely, accountId, conditions, { limit: search.limit ?? DEFAULT_PAGE, after: decodeCursor(search.cursor) });
}
