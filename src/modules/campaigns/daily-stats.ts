import type { Db } from '../../db/connect.js';
import { DAY_MS } from '../../db/utc-day.js';
import { AppError, invalid } from '../../errors.js';
import { campaignSendsByDay } from '../sends/sends.service.js';
import { campaignExists, countEngagementsByDay, selectAccountPlan } from './campaigns.repo.js';

/** One UTC day of a campaign's statistics (`herald campaign stats-daily`, the admin API's `days`). */
export interface DailyStats {
  /** yyyy-mm-dd, UTC. */
  date: string;
  /** Sends that went out that day and are still `sent` (a WhatsApp send that later failed counts as error). */
  sent: number;
  /** Sends that ended in error that day. */
  error: number;
  /** Handed to the channel that day. */
  processed: number;
  /** Accepted by the SMTP server / reported delivered by WhatsApp that day. */
  delivered: number;
  opens: number;
  /** Distinct sends opened that day (a send opened on two days counts on both). */
  uniqueOpens: number;
  clicks: number;
  uniqueClicks: number;
  /** Sends that bounced that day (also counted in `error`). */
  bounced: number;
  /** Opt-outs through the campaign's unsubscribe link that day. */
  unsubscribes: number;
}

export const MAX_STATS_DAYS = 366;

/**
 * One entry per day for the last `days` UTC days, today included, oldest first, with zeros
 * for quiet days. Each measure is dated by its own moment: sent by sent_at, error by the
 * send's last update, processed, delivered, bounced, opens, clicks and unsubscribes by theirs. Test sends (admin
 * panel) are left out, as from every statistic; engagements are never recorded for them.
 */
export async function campaignDailyStats(
  db: Db,
  accountId: string,
  campaignId: string,
  days: number,
  now = Date.now(),
): Promise<DailyStats[]> {
  if (!Number.isInteger(days) || days < 1 || days > MAX_STATS_DAYS)
    throw invalid('/days', `days must be a whole number from 1 to ${MAX_STATS_DAYS}`);
  if (!(await campaignExists(db, accountId, campaignId))) {
    if ((await selectAccountPlan(db, accountId)) === undefined) throw new AppError('ACCOUNT_NOT_FOUND');
    throw new AppError('CAMPAIGN_NOT_FOUND');
  }
  const today = Math.floor(now / DAY_MS);
  const firstDay = today - days + 1;
  const since = firstDay * DAY_MS;

  // Each reads the campaign's sends or engagements of the period: off SQLite's event loop (db.reads).
  const { reads } = db;
  const [sent, error, processed, delivered, bounced, engagements] = await Promise.all([
    campaignSendsByDay(reads, accountId, campaignId, 'sent_at', since, 'sent'),
    campaignSendsByDay(reads, accountId, campaignId, 'updated_at', since, 'error'),
    campaignSendsByDay(reads, accountId, campaignId, 'processed_at', since),
    campaignSendsByDay(reads, accountId, campaignId, 'delivered_at', since),
    campaignSendsByDay(reads, accountId, campaignId, 'bounced_at', since),
    countEngagementsByDay(reads, accountId, campaignId, since),
  ]);

  const out: DailyStats[] = [];
  const byDay = new Map<number, DailyStats>();
  for (let day = firstDay; day <= today; day++) {
    const entry: DailyStats = {
      date: new Date(day * DAY_MS).toISOString().slice(0, 10),
      sent: 0,
      error: 0,
      processed: 0,
      delivered: 0,
      opens: 0,
      uniqueOpens: 0,
      clicks: 0,
      uniqueClicks: 0,
      bounced: 0,
      unsubscribes: 0,
    };
    out.push(entry);
    byDay.set(day, entry);
  }
  // Rows dated after today (a clock ahead of ours) have no entry and are left out.
  const add = (rows: { day: number; count: number }[], member: 'sent' | 'error' | 'processed' | 'delivered' | 'bounced') => {
    for (const row of rows) {
      const entry = byDay.get(row.day);
      if (entry) entry[member] += row.count;
    }
  };
  add(sent, 'sent');
  add(error, 'error');
  add(processed, 'processed');
  add(delivered, 'delivered');
  add(bounced, 'bounced');
  for (const row of engagements) {
    const entry = byDay.get(row.day);
    if (!entry) continue;
    if (row.kind === 'open') [entry.opens, entry.uniqueOpens] = [row.count, row.unique];
    else if (row.kind === 'click') [entry.clicks, entry.uniqueClicks] = [row.count, row.unique];
    else if (row.kind === 'unsubscribe') entry.unsubscribes = row.count;
  }
  return out;
}
