import type { CriteriaInput, SegmentInput, Segment as SegmentView } from '../../contract/admin/segments.js';
import type { Db } from '../../db/connect.js';
import { longRead } from '../../db/long-reads.js';
import type { SegmentsTable } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PAGE, decodeCursor, type Position } from '../../http/paging.js';
import { newId } from '../../ids.js';
import { parseStoredJson } from '../../json-limits.js';
import { mapLimited } from '../../map-limited.js';
import { iso } from '../../time.js';
import { type ContactListItem, pageContactsWhere } from '../contacts/contacts.admin.service.js';
import { recentCounts } from './segment-counts.js';
import { type Criteria, normalizeCriteria, referencesOf } from './segment-criteria.js';
import { countSegmentContacts, criteriaConditions } from './segment-criteria.repo.js';
import * as repo from './segments.repo.js';

/** Saved segments of the admin panel: named criteria, evaluated whenever they are read. */

function present(row: SegmentsTable): SegmentView {
  // A field value sits 5 levels down (criteria, groups, group, fields, entry).
  return {
    id: row.id,
    name: row.name,
    criteria: parseStoredJson<Criteria>(row.criteria, 5),
    createdAt: iso(Number(row.created_at)),
    updatedAt: iso(Number(row.updated_at)),
  };
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw new AppError('VALIDATION', { details: [{ path: '/name', message: 'name must not be blank' }] });
  return name;
}

/**
 * Counts of the segment list under way at once. Each may read a whole table: all at once, a list
 * of many segments would take every connection of the PostgreSQL pool from the API's requests,
 * and on a 2-core machine six at once took longer than two at a time (docs/decisions.md). SQLite
 * has READER_THREADS (two) readers.
 */
const LIST_COUNTS_AT_ONCE = 2;

/**
 * The list, each segment with how many contacts it selects, counted within the last minute
 * (segment-counts.ts). The segments, one look-up of the definitions they all name (fields,
 * KPIs: two statements at most), then a count per segment not kept.
 */
export async function listSegments(db: Db, accountId: string): Promise<{ items: (SegmentView & { count: number; countedAt: string })[] }> {
  const segments = (await repo.selectSegments(db, accountId)).map(present);
  const now = Date.now();
  const keys = segments.map((segment) => ({ accountId, segmentId: segment.id, updatedAt: segment.updatedAt, criteria: segment.criteria }));
  const counts = await recentCounts(keys, now, async (missing) => {
    const list = missing.map((i) => segments[i]!.criteria as Criteria);
    const definitions = await repo.definitionsOf(db, accountId, referencesOf({ groups: list.flatMap((c) => c.groups) }));
    // One count per segment, LIST_COUNTS_AT_ONCE at a time in recentCounts' order (longest
    // first), off SQLite's event loop (db.reads), each on one core of PostgreSQL (longRead). One
    // statement counting them all measured slower on both engines (docs/decisions.md). `took`
    // includes waiting for a reader or a connection: a busy minute may reorder the next list,
    // which only orders it.
    return mapLimited(list, LIST_COUNTS_AT_ONCE, async (criteria) => {
      const started = performance.now();
      const count = await longRead(db, (q) => countSegmentContacts(q, accountId, db.engine, criteria, definitions, now), {
        oneCore: true,
      });
      return { count, took: performance.now() - started };
    });
  });
  const items = segments.map((segment, i) => ({ ...segment, count: counts[i]!.count, countedAt: iso(counts[i]!.countedAt) }));
  return { items };
}

export async function createSegment(db: Db, accountId: string, input: SegmentInput): Promise<SegmentView> {
  const name = checkName(input.name);
  const criteria = await normalizeCriteria(db, accountId, input.criteria);
  const now = Date.now();
  const row = { id: newId('seg'), name, criteria: JSON.stringify(criteria), created_at: now, updated_at: now };
  await repo.insertSegment(db, accountId, row);
  return present({ ...row, account_id: accountId });
}

export async function replaceSegment(db: Db, accountId: string, segmentId: string, input: SegmentInput): Promise<SegmentView> {
  // Existence first: "no such segment" is the more useful answer for a stale id.
  await getSegment(db, accountId, segmentId);
  const name = checkName(input.name);
  const criteria = await normalizeCriteria(db, accountId, input.criteria);
  const changed = await repo.updateSegment(db, accountId, segmentId, { name, criteria: JSON.stringify(criteria), updated_at: Date.now() });
  if (changed === 0) throw new AppError('SEGMENT_NOT_FOUND');
  return getSegment(db, accountId, segmentId);
}

export async function deleteSegment(db: Db, accountId: string, segmentId: string): Promise<void> {
  if ((await repo.deleteSegment(db, accountId, segmentId)) === 0) throw new AppError('SEGMENT_NOT_FOUND');
}

export async function getSegment(db: Db, accountId: string, segmentId: string): Promise<SegmentView> {
  const row = await repo.selectSegment(db, accountId, segmentId);
  if (!row) throw new AppError('SEGMENT_NOT_FOUND');
  return present(row);
}

/** How many contacts the criteria select, and one page of them (newest first); count and page run together. */
async function evaluate(db: Db, accountId: string, criteria: Criteria, page: { limit?: number; cursor?: string }) {
  const after = decodeCursor(page.cursor);
  const pages = await pagerOf(db, accountId, criteria, Date.now());
  // Both may read a whole table: off SQLite's event loop, side by side (db.reads).
  const [count, contacts] = await Promise.all([pages.count(), pages.page({ limit: page.limit ?? DEFAULT_PAGE, after })]);
  return { count, items: contacts.items, nextCursor: contacts.nextCursor };
}

/**
 * The criteria evaluated at `now`, the definitions they name read once: the count, and the
 * contacts page by page (newest first, keyset).
 */
async function pagerOf(db: Db, accountId: string, criteria: Criteria, now: number) {
  const definitions = await repo.definitionsOf(db, accountId, referencesOf(criteria));
  const conditions = criteriaConditions(db.engine, accountId, criteria, definitions, now);
  return {
    count: () => longRead(db, (q) => countSegmentContacts(q, accountId, db.engine, criteria, definitions, now)),
    page: (page: { limit: number; after?: Position }) => pageContactsWhere(db.reads, accountId, conditions, page),
  };
}

/**
 * A segment's contacts page by page without counting them (the CSV export): the segment and its
 * definitions read once, and every page evaluated at the same moment, so a window such as
 * "within 90 days" does not move while the file is written. Each page through segmentContacts
 * counted the whole segment again and read the segment again: a hundred counts for a
 * 100,000-contact export.
 */
export async function segmentPages(db: Db, accountId: string, segmentId: string) {
  const segment = await getSegment(db, accountId, segmentId);
  const { page } = await pagerOf(db, accountId, segment.criteria as Criteria, Date.now());
  return { name: segment.name, page };
}

/** `POST /segments/preview`: unsaved criteria, checked like saved ones. */
export async function previewSegment(
  db: Db,
  accountId: string,
  input: CriteriaInput,
): Promise<{ count: number; items: ContactListItem[] }> {
  const criteria = await normalizeCriteria(db, accountId, input);
  const { count, items } = await evaluate(db, accountId, criteria, {});
  return { count, items };
}

/** `GET /segments/:id/contacts`. */
export async function segmentContacts(db: Db, accountId: string, segmentId: string, page: { limit?: number; cursor?: string }) {
  const segment = await getSegment(db, accountId, segmentId);
  return evaluate(db, accountId, segment.criteria as Criteria, page);
}

/** The count alone (bench/admin-queries.ts measures it). */
export async function countSegment(db: Db, accountId: string, criteria: Criteria, now = Date.now()): Promise<number> {
  return (await pagerOf(db, accountId, criteria, now)).count();
}
