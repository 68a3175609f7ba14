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
 * What the contact search's `q` was read as (contacts.admin.service.ts decides): a phone in
 * stored form, `nothing` for a phone that cannot exist, or text found anywhere in the name or
 * in one of the emails.
 */
export type ContactQuery = { phone: string } | { text: string } | 'nothing';

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

/** The conditions of the contact list's filters, shared by its pages, its count and its export. */
export function filterConditions(accountId: string, engine: Engine, filter: ContactFilter): ContactCondition[] {
  const conditions: ContactCondition[] = [sql`c.archived = ${filter.archived ? 1 : 0}`];
  if (filter.optedOut !== undefined) conditions.push(sql`c.opted_out = ${filter.optedOut ? 1 : 0}`);
  if (filter.tag !== undefined) conditions.push(filter.tag === '' ? NOTHING : tagCondition(accountId, filter.tag));
  if (filter.query !== undefined) conditions.push(queryCondition(engine, accountId, filter.query));
  return conditions;
}

/** `GET /admin/api/contacts`: the contact list with its filters, newest first, one page. */
export async function searchContacts(
  db: Queryable,
  accountId: string,
  engine: Engine,
  filter: ContactFilter,
  page: { limit: number; after?: Position },
): Promise<ContactPage> {
  return pageContacts(db, accountId, filterConditions(accountId, engine, filter), page);
}

/** `GET /admin/api/contacts/count`: how many contacts the filters match (same conditions as the pages). */
export async function countContacts(db: Queryable, accountId: string, engine: Engine, filter: ContactFilter): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`
    select count(*) as n from contacts c where ${whereClause(accountId, filterConditions(accountId, engine, filter))}`.execute(
    kyselyOf(db),
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * A phone names at most one contact: `c.id = (subquery)` makes both engines look it up by
 * primary key rather than scan the account.
 */
function queryCondition(engine: Engine, accountId: string, query: ContactQuery): ContactCondition {
  if (query === 'nothing') return NOTHING;
  if ('phone' in query)
    return sql`c.id = (select contact_id from contact_phones where account_id = ${accountId} and phone = ${query.phone})`;
  return textCondition(engine, accountId, query.text);
}

/** `%`, `_` and the escape character itself are searched for as characters, not wildcards. */
export const likeSubstring = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The text is part of the name or of one of the contact's emails, ignoring case. Emails are
 * stored lowercased, so the pattern is lowercased for them. Name case: PostgreSQL compares
 * both sides lowercased (lower() knows Unicode); SQLite's LIKE ignores the case of ASCII
 * letters itself (SQLite has no Unicode case folding built in).
 *
 * The emails matching are read once per query (`c.id in (...)`: one pass over the account's
 * emails, never a seek per contact); the names are read from the index contacts_list during
 * the newest-first scan, which stops as soon as a page is full. On PostgreSQL, trigram
 * indexes (migration 0014) serve both LIKEs when the text is rare (docs/decisions.md,
 * Contacts at scale). bench/admin-queries.ts measures the worst case, a text nobody has.
 */
function textCondition(engine: Engine, accountId: string, text: string): ContactCondition {
  const pattern = likeSubstring(text);
  const inEmails = sql`c.id in (select contact_id from contact_emails where account_id = ${accountId} and email like ${pattern.toLowerCase()} escape '\\')`;
  return engine === 'postgres'
    ? sql`(lower(c.name) like lower(${pattern}) escape '\\' or ${inEmails})`
    : sql`(c.name like ${pattern} escape '\\' or ${inEmails})`;
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
 * common; a phone search is a primary-key look-up instead (see queryCondition).
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
