import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { iso } from '../../../time.js';
import { pageOf, type Position } from '../../../http/paging.js';

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

const whereClause = (accountId: string, conditions: ContactCondition[]) =>
  sql.join([sql`c.account_id = ${accountId}`, ...conditions], sql` and `);

/**
 * The account's contacts meeting every condition, newest first, one keyset page. The index
 * contacts_list (account_id, archived, created_at, id, name, opted_out) gives that order and
 * every column read here, so a page reads about `limit` index entries when the conditions are
 * common; an address search is a primary-key look-up instead (see contact-search.ts).
 */
export async function pageContacts(
  q: Kysely<Database>,
  accountId: string,
  conditions: ContactCondition[],
  page: { limit: number; after?: Position },
): Promise<ContactPage> {
  const all = page.after ? [...conditions, sql`(c.created_at, c.id) < (${page.after.at}, ${page.after.id})`] : conditions;
  const { rows } = await sql<{ id: string; name: string; archived: number; opted_out: number; created_at: number }>`
    select c.id, c.name, c.archived, c.opted_out, c.created_at from contacts c
     where ${whereClause(accountId, all)}
     order by c.created_at desc, c.id desc
     limit ${page.limit + 1}`.execute(q);
  const { items, nextCursor } = pageOf(rows, page.limit, (r) => ({ at: Number(r.created_at), id: r.id }));
  return { items: await decorate(q, accountId, items), nextCursor };
}

/**
 * Primary email, primary phone and tags of a page of contacts: three queries, whatever the
 * page size. They select by contact id alone, so each uses its contact index (an account_id
 * term would tempt SQLite, which keeps no statistics, into the account-wide index); the rows'
 * account is checked here instead.
 */
async function decorate(
  q: Kysely<Database>,
  accountId: string,
  rows: { id: string; name: string; archived: number; opted_out: number; created_at: number }[],
): Promise<ContactListItem[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const ours = <T extends { account_id: string }>(rows: T[]) => rows.filter((r) => r.account_id === accountId);
  const [emails, phones, tags] = await Promise.all([
    q.selectFrom('contact_emails').select(['account_id', 'contact_id', 'email as value']).where('contact_id', 'in', ids).orderBy('contact_id').orderBy('position').execute().then(ours),
    q.selectFrom('contact_phones').select(['account_id', 'contact_id', 'phone as value']).where('contact_id', 'in', ids).orderBy('contact_id').orderBy('position').execute().then(ours),
    q.selectFrom('contact_tags').select(['account_id', 'contact_id', 'tag']).where('contact_id', 'in', ids).orderBy('contact_id').orderBy('tag').execute().then(ours),
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
