import type { Db } from '../../db/connect.js';
import { decodeCursor } from '../../http/paging.js';
import type { ContactListItem, ContactSearch } from '../contacts/contacts.admin.service.js';
import { searchContacts } from '../contacts/contacts.admin.service.js';
import { segmentPages } from '../segments/segments.service.js';

/**
 * Contacts read for a CSV export a page at a time: a file of 100,000 contacts never sits in
 * memory whole, and each page is one keyset query (the list's or the segment's own).
 */
const EXPORT_PAGE = 1000;

type Page = { items: ContactListItem[]; nextCursor: string | null };

async function* walk(next: (cursor: string | undefined) => Promise<Page>): AsyncGenerator<ContactListItem> {
  let cursor: string | undefined;
  do {
    const page = await next(cursor);
    yield* page.items;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/** The contact list's contacts with its search and filters, newest first (`GET /contacts/export`). */
export function exportedContacts(
  db: Db,
  accountId: string,
  filters: Omit<ContactSearch, 'limit' | 'cursor'>,
): AsyncGenerator<ContactListItem> {
  return walk((cursor) => searchContacts(db, accountId, { ...filters, limit: EXPORT_PAGE, cursor }));
}

/**
 * A segment's contacts as it evaluates now, newest first, through the segments service's own
 * evaluation, uncounted. The segment is looked up first, so another account's or an unknown id
 * answers 404 before any of the file is sent.
 */
export async function exportedSegmentContacts(db: Db, accountId: string, segmentId: string) {
  const { name, page } = await segmentPages(db, accountId, segmentId);
  return { name, contacts: walk((cursor) => page({ limit: EXPORT_PAGE, after: decodeCursor(cursor) })) };
}
