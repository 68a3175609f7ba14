import { sql, type Kysely } from 'kysely';
import type { AccountsTable, CampaignsTable, Database, SendStatus } from '../../db/schema.js';

/**
 * SQL of the campaigns module, and nothing else. The account id comes first in every function
 * and is part of every WHERE, so another account's campaign id reads and writes nothing.
 * Each function takes a Kysely: the app's, or one bound to an open transaction.
 * `lock` (PostgreSQL only; SQLite transactions already hold the write lock from their start)
 * makes a read inside a read-modify-write transaction take a row lock.
 */
type Q = Kysely<Database>;

export async function selectAccountPlan(q: Q, accountId: string, lock = false): Promise<AccountsTable['plan'] | undefined> {
  let query = q.selectFrom('accounts').select('plan').where('id', '=', accountId);
  // A shared lock: a concurrent plan change (which updates this row) waits for our commit, or we for its.
  if (lock) query = query.forShare();
  return (await query.executeTakeFirst())?.plan;
}

export async function selectCampaign(q: Q, accountId: string, campaignId: string, lock = false): Promise<CampaignsTable | undefined> {
  let query = q.selectFrom('campaigns').selectAll().where('account_id', '=', accountId).where('id', '=', campaignId);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * The campaign row and its webhook URLs in order, in one query (a trigger and every send read
 * a campaign: one round trip instead of two on PostgreSQL): one row per webhook, or one with a
 * null URL when there is none.
 */
export async function selectCampaignWithWebhooks(q: Q, accountId: string, campaignId: string): Promise<{ row: CampaignsTable; webhooks: string[] } | undefined> {
  const [found] = await selectCampaignsWithWebhooks(q, [campaignId]);
  // Ids are unique across accounts: another account's campaign is simply not found.
  return found?.row.account_id === accountId ? found : undefined;
}

/** Like selectCampaignWithWebhooks for several campaigns at once (by id; the caller checks the account). */
export async function selectCampaignsWithWebhooks(q: Q, campaignIds: string[]): Promise<{ row: CampaignsTable; webhooks: string[] }[]> {
  const rows = await q
    .selectFrom('campaigns as c')
    .leftJoin('campaign_webhooks as w', (join) => join.onRef('w.campaign_id', '=', 'c.id').onRef('w.account_id', '=', 'c.account_id'))
    .selectAll('c')
    .select('w.url as webhook_url')
    .where('c.id', 'in', campaignIds)
    .orderBy('c.id')
    .orderBy('w.position')
    .execute();
  const found = new Map<string, { row: CampaignsTable; webhooks: string[] }>();
  for (const { webhook_url, ...row } of rows) {
    let campaign = found.get(row.id);
    if (!campaign) found.set(row.id, (campaign = { row, webhooks: [] }));
    if (webhook_url !== null) campaign.webhooks.push(webhook_url);
  }
  return [...found.values()];
}

export async function campaignExists(q: Q, accountId: string, campaignId: string): Promise<boolean> {
  const row = await q.selectFrom('campaigns').select('id').where('account_id', '=', accountId).where('id', '=', campaignId).executeTakeFirst();
  return row !== undefined;
}

export async function selectWebhookUrls(q: Q, accountId: string, campaignId: string): Promise<string[]> {
  const rows = await q
    .selectFrom('campaign_webhooks')
    .select('url')
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.url);
}

export async function selectCampaigns(q: Q, accountId: string): Promise<CampaignsTable[]> {
  return q.selectFrom('campaigns').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
}

/** Every webhook of the account's campaigns, in one query (for listings). */
export async function selectAccountWebhooks(q: Q, accountId: string): Promise<{ campaign_id: string; url: string }[]> {
  return q
    .selectFrom('campaign_webhooks')
    .select(['campaign_id', 'url'])
    .where('account_id', '=', accountId)
    .orderBy('campaign_id')
    .orderBy('position')
    .execute();
}

export async function selectWebhookSecret(q: Q, accountId: string, campaignId: string): Promise<string | undefined> {
  const row = await q.selectFrom('campaigns').select('webhook_secret').where('account_id', '=', accountId).where('id', '=', campaignId).executeTakeFirst();
  return row?.webhook_secret;
}

export async function insertCampaign(q: Q, accountId: string, row: Omit<CampaignsTable, 'account_id'>): Promise<void> {
  await q.insertInto('campaigns').values({ ...row, account_id: accountId }).execute();
}

export async function updateCampaignRow(
  q: Q,
  accountId: string,
  campaignId: string,
  values: Partial<Omit<CampaignsTable, 'id' | 'account_id' | 'webhook_secret' | 'created_at'>>,
): Promise<void> {
  await q.updateTable('campaigns').set(values).where('account_id', '=', accountId).where('id', '=', campaignId).execute();
}

/** The list is replaced as a whole: positions 0..n-1 are the order the caller gave. */
export async function replaceWebhooks(q: Q, accountId: string, campaignId: string, urls: string[]): Promise<void> {
  await q.deleteFrom('campaign_webhooks').where('account_id', '=', accountId).where('campaign_id', '=', campaignId).execute();
  if (urls.length === 0) return;
  await q
    .insertInto('campaign_webhooks')
    .values(urls.map((url, position) => ({ campaign_id: campaignId, position, account_id: accountId, url })))
    .execute();
}

/**
 * Switches off the account's active WhatsApp campaigns. Race-free with a concurrent
 * activation on PostgreSQL because the caller has just updated the account row, and an
 * activation holds a shared lock on that row (selectAccountPlan with lock) until it commits.
 */
export async function deactivateWhatsappCampaigns(q: Q, accountId: string, now: number): Promise<void> {
  await q
    .updateTable('campaigns')
    .set({ active: 0, updated_at: now })
    .where('account_id', '=', accountId)
    .where('channel', '=', 'whatsapp')
    .where('active', '=', 1)
    .execute();
}

export interface StatusCount {
  status: SendStatus;
  count: number;
  processed: number;
  delivered: number;
}

/** One grouped scan of the campaign's sends: count per status, and how many were processed / delivered. */
export async function countSends(q: Q, accountId: string, campaignId: string): Promise<StatusCount[]> {
  const rows = await q
    .selectFrom('sends')
    .select(['status', sql<number>`count(*)`.as('count'), sql<number>`count(processed_at)`.as('processed'), sql<number>`count(delivered_at)`.as('delivered')])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .groupBy('status')
    .execute();
  // count() is a bigint on PostgreSQL: connect.ts parses it, Number() keeps both engines alike.
  return rows.map((r) => ({ status: r.status, count: Number(r.count), processed: Number(r.processed), delivered: Number(r.delivered) }));
}

export interface EngagementCount {
  kind: 'open' | 'click';
  total: number;
  unique: number;
}

/** Opens and clicks of the campaign: total rows and distinct sends, per kind. */
export async function countEngagements(q: Q, accountId: string, campaignId: string): Promise<EngagementCount[]> {
  const rows = await q
    .selectFrom('engagements')
    .select(['kind', sql<number>`count(*)`.as('total'), sql<number>`count(distinct send_id)`.as('distinct_sends')])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .groupBy('kind')
    .execute();
  return rows.map((r) => ({ kind: r.kind, total: Number(r.total), unique: Number(r.distinct_sends) }));
}
