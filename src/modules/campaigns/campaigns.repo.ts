import { type Expression, sql } from 'kysely';
import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { AccountsTable, CampaignsTable } from '../../db/schema.js';
import { utcDayOf } from '../../db/utc-day.js';

/**
 * SQL of the campaigns module, and nothing else. The account id comes first in every function
 * and is part of every WHERE, so another account's campaign id reads and writes nothing.
 * Each function takes a Queryable: the app's database, or a Kysely bound to an open transaction.
 * `lock` (PostgreSQL only; SQLite transactions already hold the write lock from their start)
 * makes a read inside a read-modify-write transaction take a row lock.
 * A deleted campaign (deleted_at set, migration 0013) is skipped by every read and write here:
 * to the rest of the app it does not exist.
 */
/** The campaigns not deleted. */
const live = (db: Queryable) => kyselyOf(db).selectFrom('campaigns').where('deleted_at', 'is', null);

export async function selectAccountPlan(db: Queryable, accountId: string, lock = false): Promise<AccountsTable['plan'] | undefined> {
  let query = kyselyOf(db).selectFrom('accounts').select('plan').where('id', '=', accountId);
  // A shared lock: a concurrent plan change (which updates this row) waits for our commit, or we for its.
  if (lock) query = query.forShare();
  return (await query.executeTakeFirst())?.plan;
}

export async function selectCampaign(
  db: Queryable,
  accountId: string,
  campaignId: string,
  lock = false,
): Promise<CampaignsTable | undefined> {
  let query = live(db).selectAll().where('account_id', '=', accountId).where('id', '=', campaignId);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * The campaign row and its webhook URLs in order, in one query (a trigger and every send read
 * a campaign: one round trip instead of two on PostgreSQL): one row per webhook, or one with a
 * null URL when there is none.
 */
export async function selectCampaignWithWebhooks(
  db: Queryable,
  accountId: string,
  campaignId: string,
): Promise<{ row: CampaignsTable; webhooks: string[] } | undefined> {
  const [found] = await selectCampaignsWithWebhooks(db, [campaignId]);
  // Ids are unique across accounts: another account's campaign is simply not found.
  return found?.row.account_id === accountId ? found : undefined;
}

/** Like selectCampaignWithWebhooks for several campaigns at once (by id; the caller checks the account). */
export async function selectCampaignsWithWebhooks(
  db: Queryable,
  campaignIds: string[],
): Promise<{ row: CampaignsTable; webhooks: string[] }[]> {
  return groupCampaignRows(await campaignsWithWebhooksQuery(db, campaignIds).execute());
}

/**
 * The read of selectCampaignsWithWebhooks, for ids given as a list or a subquery (the PostgreSQL
 * claim embeds it, dispatch-claim.pg.ts): a row per campaign and webhook URL, in URL order.
 */
export function campaignsWithWebhooksQuery(db: Queryable, campaignIds: readonly string[] | Expression<string>) {
  return kyselyOf(db)
    .selectFrom('campaigns as c')
    .leftJoin('campaign_webhooks as w', (join) => join.onRef('w.campaign_id', '=', 'c.id').onRef('w.account_id', '=', 'c.account_id'))
    .selectAll('c')
    .select('w.url as webhook_url')
    .where('c.id', 'in', campaignIds)
    .where('c.deleted_at', 'is', null)
    .orderBy('c.id')
    .orderBy('w.position');
}

/** Those rows, one entry per campaign with its URLs in order. */
export function groupCampaignRows(
  rows: (CampaignsTable & { webhook_url: string | null })[],
): { row: CampaignsTable; webhooks: string[] }[] {
  const found = new Map<string, { row: CampaignsTable; webhooks: string[] }>();
  for (const { webhook_url, ...row } of rows) {
    let campaign = found.get(row.id);
    if (!campaign) {
      campaign = { row, webhooks: [] };
      found.set(row.id, campaign);
    }
    if (webhook_url !== null) campaign.webhooks.push(webhook_url);
  }
  return [...found.values()];
}

export async function campaignExists(db: Queryable, accountId: string, campaignId: string): Promise<boolean> {
  const row = await live(db).select('id').where('account_id', '=', accountId).where('id', '=', campaignId).executeTakeFirst();
  return row !== undefined;
}

export async function selectWebhookUrls(db: Queryable, accountId: string, campaignId: string): Promise<string[]> {
  const rows = await kyselyOf(db)
    .selectFrom('campaign_webhooks')
    .select('url')
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.url);
}

export async function selectCampaigns(db: Queryable, accountId: string): Promise<CampaignsTable[]> {
  return live(db).selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
}

/** Every webhook of the account's campaigns, in one query (for listings). */
export async function selectAccountWebhooks(db: Queryable, accountId: string): Promise<{ campaign_id: string; url: string }[]> {
  return kyselyOf(db)
    .selectFrom('campaign_webhooks')
    .select(['campaign_id', 'url'])
    .where('account_id', '=', accountId)
    .orderBy('campaign_id')
    .orderBy('position')
    .execute();
}

export async function selectWebhookSecret(db: Queryable, accountId: string, campaignId: string): Promise<string | undefined> {
  const row = await live(db).select('webhook_secret').where('account_id', '=', accountId).where('id', '=', campaignId).executeTakeFirst();
  return row?.webhook_secret;
}

export async function insertCampaign(db: Queryable, accountId: string, row: Omit<CampaignsTable, 'account_id'>): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('campaigns')
      .values({ ...row, account_id: accountId })
      .execute(),
  );
}

export async function updateCampaignRow(
  db: Queryable,
  accountId: string,
  campaignId: string,
  values: Partial<Omit<CampaignsTable, 'id' | 'account_id' | 'webhook_secret' | 'created_at'>>,
): Promise<void> {
  await writeOn(db, (q) =>
    q
      .updateTable('campaigns')
      .set(values)
      .where('account_id', '=', accountId)
      .where('id', '=', campaignId)
      .where('deleted_at', 'is', null)
      .execute(),
  );
}

/** The list is replaced as a whole: positions 0..n-1 are the order the caller gave. */
export async function replaceWebhooks(db: Queryable, accountId: string, campaignId: string, urls: string[]): Promise<void> {
  await writeOn(db, (q) =>
    q.deleteFrom('campaign_webhooks').where('account_id', '=', accountId).where('campaign_id', '=', campaignId).execute(),
  );
  if (urls.length === 0) return;
  await writeOn(db, (q) =>
    q
      .insertInto('campaign_webhooks')
      .values(urls.map((url, position) => ({ campaign_id: campaignId, position, account_id: accountId, url })))
      .execute(),
  );
}

/**
 * Switches off the account's active WhatsApp campaigns. Race-free with a concurrent
 * activation on PostgreSQL because the caller has just updated the account row, and an
 * activation holds a shared lock on that row (selectAccountPlan with lock) until it commits.
 */
export async function deactivateWhatsappCampaigns(db: Queryable, accountId: string, now: number): Promise<void> {
  await writeOn(db, (q) =>
    q
      .updateTable('campaigns')
      .set({ active: 0, updated_at: now })
      .where('account_id', '=', accountId)
      .where('channel', '=', 'whatsapp')
      .where('active', '=', 1)
      .execute(),
  );
}

/** The names of the account's campaigns (not deleted) that start with `prefix`: a duplicate picks a free name among them. */
export async function selectCampaignNamesStartingWith(db: Queryable, accountId: string, prefix: string): Promise<string[]> {
  const rows = await live(db).select('name').where('account_id', '=', accountId).execute();
  // Filtered here, not with LIKE: a name may hold % or _, and SQLite's LIKE ignores case.
  return rows.map((r) => r.name).filter((name) => name.startsWith(prefix));
}

/** Marks the campaign deleted (and inactive). Rows changed: 0 when it is not this account's or already deleted. */
export async function markCampaignDeleted(db: Queryable, accountId: string, campaignId: string, now: number): Promise<number> {
  const result = await writeOn(db, (q) =>
    q
      .updateTable('campaigns')
      .set({ deleted_at: now, active: 0, updated_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', campaignId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}

/**
 * Ends the campaign's sends that have not gone out (pending or queued, test sends included) as
 * cancelled with `reason`. A conditional update on the status, like the cancel operation: a
 * send a worker has already claimed (sending) is left to it, and its due-time check finds no
 * campaign. Answers how many were cancelled.
 */
export async function cancelUnsentSends(
  db: Queryable,
  accountId: string,
  campaignId: string,
  reason: string,
  now: number,
): Promise<number> {
  const result = await writeOn(db, (q) =>
    q
      .updateTable('sends')
      .set({ status: 'cancelled', reason, lease_until: null, updated_at: now })
      .where('account_id', '=', accountId)
      .where('campaign_id', '=', campaignId)
      .where('status', 'in', ['pending', 'queued'])
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}

/** Gives up the campaign's webhook deliveries still waiting for an attempt (failed, with `reason`). */
export async function failPendingWebhookDeliveries(db: Queryable, accountId: string, campaignId: string, reason: string, now: number) {
  await writeOn(db, (q) =>
    q
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', last_error: reason, updated_at: now })
      .where('account_id', '=', accountId)
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .execute(),
  );
}

export interface EngagementCount {
  kind: 'open' | 'click' | 'unsubscribe';
  total: number;
  unique: number;
}

/** Clicks of the campaign per link, the most clicked first (the top `limit` links). */
export async function countClicksByLink(db: Queryable, accountId: string, campaignId: string, limit: number) {
  const rows = await kyselyOf(db)
    .selectFrom('engagements')
    .select(['url', sql<number>`count(*)`.as('total'), sql<number>`count(distinct send_id)`.as('distinct_sends')])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .where('kind', '=', 'click')
    .groupBy('url')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('url')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ url: r.url ?? '', clicks: Number(r.total), uniqueClicks: Number(r.distinct_sends) }));
}

/** Opens, clicks and unsubscribes of the campaign: total rows and distinct sends, per kind. */
export async function countEngagements(db: Queryable, accountId: string, campaignId: string): Promise<EngagementCount[]> {
  const rows = await kyselyOf(db)
    .selectFrom('engagements')
    .select(['kind', sql<number>`count(*)`.as('total'), sql<number>`count(distinct send_id)`.as('distinct_sends')])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .groupBy('kind')
    .execute();
  return rows.map((r) => ({ kind: r.kind, total: Number(r.total), unique: Number(r.distinct_sends) }));
}

/** Opens and clicks of the campaign per UTC day since `since`: rows and distinct sends, per kind. */
export async function countEngagementsByDay(db: Queryable, accountId: string, campaignId: string, since: number) {
  const rows = await kyselyOf(db)
    .selectFrom('engagements')
    .select([
      'kind',
      utcDayOf('created_at').as('day'),
      sql<number>`count(*)`.as('count'),
      sql<number>`count(distinct send_id)`.as('unique_sends'),
    ])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .where('created_at', '>=', since)
    .groupBy(['kind', utcDayOf('created_at')])
    .execute();
  return rows.map((r) => ({ kind: r.kind, day: Number(r.day), count: Number(r.count), unique: Number(r.unique_sends) }));
}
