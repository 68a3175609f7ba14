import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import { type Position, pageOf } from '../../http/paging.js';
import { iso } from '../../time.js';

/** One row of a contact list (the contact search, a segment's contacts). */
export interface ContactListItem {
  id: string;
  name: string;
  /** The primary (first stored) address, used for sending; null when there is none. */
  email: string | null;
  phone: string | null;
  tags: string[];
  archived: boolean;
  optedOut: boolean;
  createdAt: string;
}

/** A condition on the contacts row, aliased `c`, written as SQL valid on both engines. */
export type ContactCondition = RawBuilder<unknown>;

export interface ContactPage {
  items: ContactListItem[];
  nextCursor: string | null;
}

/**
 * What the contact search's `q` was read as (contacts.admin.service.ts decides): an email or
 * a phone in stored form, `nothing` for an address that cannot exist, or a name word prefix.
 */
export type ContactQuery = { email: string } | { phone: string } | { namePrefix: string } | 'nothing';

export interface ContactFilter {
  /** true: the archived contacts only; false: the listed ones. */
  archived: boolean;
  optedOut?: boolean;
  /** A tag in stored form; '' (a tag that cannot exist) matches nothing. */
  tag?: string;
  query?: ContactQuery;
}

/** A condition no row meets: a search for an address that cannot exist finds nothing. */
const NOTHING = sql`1 = 0`;

const whereClause = (accountId: string, conditions: ContactCondition[]) =>
  sql.join([sql`c.account_id = ${accountId}`, ...conditions], sql` and `);

/** `GET /admin/api/contacts`: the contact list with its filters, newest first, one page. */
export async function searchContacts(
  db: Queryable,
  accountId: string,
  engine: Engine,
  filter: ContactFilter,
  page: { limit: number; after?: Position },
): Promise<ContactPage> {
  const conditions: ContactCondition[] = [sql`c.archived = ${filter.archived ? 1 : 0}`];
  if (filter.optedOut !== undefined) conditions.push(sql`c.opted_out = ${filter.optedOut ? 1 : 0}`);
  if (filter.tag !== undefined) conditions.push(filter.tag === '' ? NOTHING : tagCondition(accountId, filter.tag));
  if (filter.query !== undefined) conditions.push(queryCondition(engine, accountId, filter.query));
  return pageContacts(db, accountId, conditions, page);
}

/**
 * An address names at most one contact: `c.id = (subquery)` makes both engines look it up by
 * primary key rather than scan the account.
 */
function queryCondition(engine: Engine, accountId: string, query: ContactQuery): ContactCondition {
  if (query === 'nothing') return NOTHING;
  if ('email' in query)
    return sql`c.id = (select contact_id from contact_emails where account_id = ${accountId} and email = ${query.email})`;
  if ('phone' in query)
    return sql`c.id = (select contact_id from contact_phones where account_id = ${accountId} and phone = ${query.phone})`;
  return namePrefix(engine, query.namePrefix);
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

/**
 * The account's contacts meeting every condition, newest first, one keyset page. The index
 * contacts_list (account_id, archived, created_at, id, name, opted_out) gives that order and
 * every column read here, so a page reads about `limit` index entries when the conditions are
 * common; an address search is a primary-key look-up instead (see queryCondition).
 */
export async function pageContacts(
  db: Queryable,
  accountId: string,
  conditions: ContactCondition[],
  page: { limit: number; after?: Position },
): Promise<ContactPage> {
  const q = kyselyOf(db);
  const all = page.after ? [...conditions, sql`(c.created_at, c.id) < (${page.after.at}, ${page.after.id})`] : conditions;
  const { rows } = await sql<ContactRow>`
    select c.id, c.name, c.archived, c.opted_out, c.created_at from contacts c
     where ${whereClause(accountId, all)}
     order by c.created_at desc, c.id desc
     limit ${page.limit + 1}`.execute(q);
  const { items, nextCursor } = pageOf(rows, page.limit, (r) => ({ at: Number(r.created_at), id: r.id }));
  return { items: await decorate(db, accountId, items), nextCursor };
}

interface ContactRow {
  id: string;
  name: string;
  archived: number;
  opted_out: number;
  created_at: number;
}

/**
 * Primary email, primary phone and tags of a page of contacts: three queries, whatever the
 * page size. They select by contact id alone, so each uses its contact index (an account_id
 * term would tempt SQLite, which keeps no statistics, into the account-wide index); the rows'
 * account is checked here instead.
 */
async function decorate(db: Queryable, accountId: string, rows: ContactRow[]): Promise<ContactListItem[]> {
  if (rows.length === 0) return [];
  const q = kyselyOf(db);
  const ids = rows.map((r) => r.id);
  const ours = <T extends { account_id: string }>(rows: T[]) => rows.filter((r) => r.account_id === accountId);
  const [emails, phones, tags] = await Promise.all([
    q
      .selectFrom('contact_emails')
      .select(['account_id', 'contact_id', 'email as value'])
      .where('contact_id', 'in', ids)
      .orderBy('contact_id')
      .orderBy('position')
      .execute()
      .then(ours),
    q
      .selectFrom('contact_phones')
      .select(['account_id', 'contact_id', 'phone as value'])
      .where('contact_id', 'in', ids)
      .orderBy('contact_id')
      .orderBy('position')
      .execute()
      .then(ours),
    q
      .selectFrom('contact_tags')
      .select(['account_id', 'contact_id', 'tag'])
      .where('contact_id', 'in', ids)
      .orderBy('contact_id')
      .orderBy('tag')
      .execute()
      .then(ours),
  ]);
  const first = (list: { contact_id: string; value: string }[]) => {
    const map = new Map<string, string>();
    // Ordered by position: the first seen per contact is its primary address.
    for (const row of list) if (!map.has(row.contact_id)) map.set(row.contact_id, row.value);
    return map;
  };
  const primaryEmail = first(emails);
  const primaryPhone = first(phones);
  const tagsOf = new Map<string, string[]>();
  for (const row of tags) tagsOf.set(row.contact_id, [...(tagsOf.get(row.contact_id) ?? []), row.tag]);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    email: primaryEmail.get(r.id) ?? null,
    phone: primaryPhone.get(r.id) ?? null,
    tags: tagsOf.get(r.id) ?? [],
    archived: Number(r.archived) === 1,
    optedOut: Number(r.opted_out) === 1,
    createdAt: iso(Number(r.created_at)),
  }));
}
