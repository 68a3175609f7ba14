import type { ActivityItem } from '../../contract/admin/contacts.js';
import type { Db } from '../../db/connect.js';
import { AppError } from '../../errors.js';
import { parseStoredJson } from '../../json-limits.js';
import { iso } from '../../time.js';
import { contactExists } from '../contacts/contacts.service.js';
import * as repo from './activity.repo.js';

/** One entry of a contact's activity feed, as `herald contact activity` prints it (the admin API's contract). */
export type { ActivityItem };

interface Timed {
  at: number;
  /** Breaks ties between items of the same millisecond so paging is stable. */
  tie: string;
  item: ActivityItem;
}

export interface ActivityPage {
  items: ActivityItem[];
}

/** A source reads at most `limit` items older than `before`, newest first. */
type Source = (db: Db, accountId: string, contactId: string, before: number, limit: number) => Promise<Timed[]>;

const events: Source = async (db, accountId, contactId, before, limit) => {
  const rows = await repo.selectEvents(db, accountId, contactId, before, limit);
  return rows.map((r) => ({
    at: r.created_at,
    tie: r.id,
    item: {
      kind: 'event',
      at: iso(r.created_at),
      id: r.id,
      type: r.type,
      value: r.value,
      metadata: parseStoredJson(r.metadata),
      url: r.url,
    },
  }));
};

const notes: Source = async (db, accountId, contactId, before, limit) => {
  const rows = await repo.selectNotes(db, accountId, contactId, before, limit);
  return rows.map((r) => ({
    at: r.created_at,
    tie: r.id,
    item: { kind: 'note', at: iso(r.created_at), text: r.text, createdBy: r.created_by },
  }));
};

/** Every trigger leaves a send (sent, pending, rejected, optout ...): it shows in the feed at its trigger time. */
const sends: Source = async (db, accountId, contactId, before, limit) => {
  const rows = await repo.selectSends(db, accountId, contactId, before, limit);
  return rows.map((r) => ({
    at: r.created_at,
    tie: r.id,
    item: { kind: 'send', at: iso(r.created_at), sendId: r.id, campaignId: r.campaign_id, status: r.status },
  }));
};

/** Opens (email pixel, WhatsApp read), clicks and unsubscribes (the send's link), each its own item, at the moment it happened. */
const engagements: Source = async (db, accountId, contactId, before, limit) => {
  const rows = await repo.selectEngagements(db, accountId, contactId, before, limit);
  return rows.map((r) => {
    const at = iso(Number(r.created_at));
    const item: ActivityItem =
      r.kind === 'click'
        ? { kind: 'click', at, sendId: r.send_id, campaignId: r.campaign_id, url: r.url ?? '' }
        : { kind: r.kind, at, sendId: r.send_id, campaignId: r.campaign_id };
    return { at: Number(r.created_at), tie: r.id, item };
  });
};

const sources: Source[] = [events, notes, sends, engagements];

/**
 * The contact's events, notes, sends, opens and clicks, newest first. Each source reads at most `limit`
 * items, then the merge keeps the newest `limit`; `before` (epoch ms) pages further back.
 */
export async function listActivity(
  db: Db,
  accountId: string,
  contactId: string,
  options: { limit?: number; before?: number } = {},
): Promise<ActivityPage> {
  const limit = Math.min(Math.max(options.limit ?? 100, 1), 500);
  if (!(await contactExists(db, accountId, contactId))) throw new AppError('LEAD_NOT_FOUND');
  const before = options.before ?? Number.MAX_SAFE_INTEGER;
  const all = (await Promise.all(sources.map((source) => source(db, accountId, contactId, before, limit)))).flat();
  all.sort((a, b) => b.at - a.at || (a.tie < b.tie ? 1 : a.tie > b.tie ? -1 : 0));
  return { items: all.slice(0, limit).map((t) => t.item) };
}

/** Which of these sends are admin panel test sends (the panel marks them in the feed). */
export async function testSendIds(db: Db, accountId: string, sendIds: string[]): Promise<Set<string>> {
  return new Set(await repo.selectTestSendIds(db, accountId, sendIds));
}
