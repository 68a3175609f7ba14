import { sql, type Kysely } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { AppError, invalid } from '../../errors.js';
import { campaignExists, selectAccountPlan } from './campaigns.repo.js';

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
}

export const MAX_STATS_DAYS = 366;
const DAY_MS = 86_400_000;

/**
 * One entry per day for the last `days` UTC days, today included, oldest first, with zeros
 * for quiet days. Each measure is dated by its own moment: sent by sent_at, error by the
 * send's last update, processed, delivered, opens and clicks by theirs. Test sends (admin
 * panel) are left out, as from every statistic; engagements are never recorded for them.
 */
export async function campaignDailyStats(db: Db, accountId: string, campaignId: string, days: number, now = Date.now()): Promise<DailyStats[]> {
  if (!Number.isInteger(days) || days < 1 || days > MAX_STATS_DAYS) throw invalid('/days', `days must be a whole number from 1 to ${MAX_STATS_DAYS}`);
  const q = db.kysely;
  if (!(await campaignExists(q, accountId, campaignId))) {
    if ((await selectAccountPlan(q, accountId)) === undefined) throw new AppError('ACCOUNT_NOT_FOUND');
    throw new AppError('CAMPAIGN_NOT_FOUND');
  }
  const today = Math.floor(now / DAY_MS);
  const firstDay = today - days + 1;
  const since = firstDay * DAY_MS;

  const [sent, error, processed, delivered, engagements] = await Promise.all([
    countSendsByDay(q, accountId, campaignId, 'sent_at', since, 'sent'),
    countSendsByDay(q, accountId, campaignId, 'updated_at', since, 'error'),
    countSendsByDay(q, accountId, campaignId, 'processed_at', since),
    countSendsByDay(q, accountId, campaignId, 'delivered_at', since),
    countEngagementsByDay(q, accountId, campaignId, since),
  ]);

  const out: DailyStats[] = [];
  const byDay = new Map<number, DailyStats>();
  for (let day = firstDay; day <= today; day++) {
    const entry: DailyStats = { date: new Date(day * DAY_MS).toISOString().slice(0, 10), sent: 0, error: 0, processed: 0, delivered: 0, opens: 0, uniqueOpens: 0, clicks: 0, uniqueClicks: 0 };
    out.push(entry);
    byDay.set(day, entry);
  }
  // Rows dated after today (a clock ahead of ours) have no entry and are left out.
  const add = (rows: DayCount[], member: 'sent' | 'error' | 'processed' | 'delivered') => {
    for (const row of rows) {
      const entry = byDay.get(row.day);
      if (entry) entry[member] += row.count;
    }
  };
  add(sent, 'sent');
  add(error, 'error');
  add(processed, 'processed');
  add(delivered, 'delivered');
  for (const row of engagements) {
    const entry = byDay.get(row.day);
    if (!entry) continue;
    if (row.kind === 'open') [entry.opens, entry.uniqueOpens] = [row.count, row.unique];
    else [entry.clicks, entry.uniqueClicks] = [row.count, row.unique];
  }
  return out;
}

interface DayCount {
  day: number;
  count: number;
}

type SendTime = 'sent_at' | 'updated_at' | 'processed_at' | 'delivered_at';

/**
 * The UTC day number of an epoch-milliseconds column: integer division, the same on SQLite
 * (integer operands) and PostgreSQL (bigint). A literal, not a parameter, so the SELECT and
 * GROUP BY expressions are textually the same, as PostgreSQL requires.
 */
function dayOf(column: string) {
  return sql<number>`${sql.ref(column)} / ${sql.lit(DAY_MS)}`;
}

async function countSendsByDay(q: Kysely<Database>, accountId: string, campaignId: string, column: SendTime, since: number, status?: 'sent' | 'error'): Promise<DayCount[]> {
  let query = q
    .selectFrom('sends')
    .select([dayOf(column).as('day'), sql<number>`count(*)`.as('count')])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .where('test', '=', 0)
    .where(column, '>=', since);
  if (status !== undefined) query = query.where('status', '=', status);
  const rows = await query.groupBy(dayOf(column)).execute();
  return rows.map((r) => ({ day: Number(r.day), count: Number(r.count) }));
}

async function countEngagementsByDay(q: Kysely<Database>, accountId: string, campaignId: string, since: number) {
  const rows = await q
    .selectFrom('engagements')
    .select(['kind', dayOf('created_at').as('day'), sql<number>`count(*)`.as('count'), sql<number>`count(distinct send_id)`.as('unique_sends')])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .where('created_at', '>=', since)
    .groupBy(['kind', dayOf('created_at')])
    .execute();
  return rows.map((r) => ({ kind: r.kind, day: Number(r.day), count: Number(r.count), unique: Number(r.unique_sends) }));
}
