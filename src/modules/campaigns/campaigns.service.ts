import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { Queryable } from '../../db/queryable.js';
import type { CampaignsTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { campaignSendCounts } from '../sends/sends.service.js';
import { type Campaign, toCampaign } from './campaign.js';
import { copyName, copyNamePrefix } from './campaign-copies.js';
import {
  type CampaignInput,
  type CampaignUpdate,
  checkSettings,
  checkUpdate,
  defaultSettings,
  mergeSettings,
  type Settings,
} from './campaign-settings.js';
import * as repo from './campaigns.repo.js';
import { newWebhookSecret, openWebhookSecret, sealWebhookSecret } from './webhook-secret.js';

export type { CampaignInput, CampaignUpdate } from './campaign-settings.js';

/**
 * Creates a campaign. Every setting is checked first (webhook URLs may resolve DNS, so that
 * happens before the transaction); then the plan rule and the writes run in one transaction,
 * so a refused `--activate` leaves nothing behind.
 */
export async function createCampaign(
  db: Db,
  config: Pick<Config, 'secret' | 'webhookAllowPrivate'>,
  accountId: string,
  input: CampaignInput,
): Promise<{ id: string; webhookSecret: string }> {
  await requireAccount(db, accountId);
  await checkUpdate(requireCreateMembers(input), config);
  const settings = mergeSettings(defaultSettings(input.name, input.channel), input);
  const id = newId('cmp');
  const webhookSecret = newWebhookSecret();
  await inTransaction(db, async (tx) => {
    checkSettings(settings, await requireAccount(tx, accountId, db.engine === 'postgres'));
    const now = Date.now();
    await repo.insertCampaign(tx, accountId, {
      id,
      ...rowValues(settings),
      webhook_secret: sealWebhookSecret(config, webhookSecret),
      created_at: now,
      updated_at: now,
    });
    await repo.replaceWebhooks(tx, accountId, id, settings.webhooks);
  });
  return { id, webhookSecret };
}

/**
 * Applies the members given and judges the merged result, so an update can never leave an
 * active campaign incomplete. A `webhooks` list replaces the stored one.
 */
export async function updateCampaign(
  db: Db,
  config: Pick<Config, 'webhookAllowPrivate'>,
  accountId: string,
  campaignId: string,
  update: CampaignUpdate,
): Promise<{ id: string }> {
  // Existence before validation: "no such campaign" is the more useful answer for a typo'd id.
  if (!(await repo.selectCampaign(db, accountId, campaignId))) await notFound(db, accountId);
  await checkUpdate(update, config);
  const lock = db.engine === 'postgres';
  await inTransaction(db, async (tx) => {
    // Read again under lock: the merge must start from what is stored now, not before the DNS checks.
    const plan = await requireAccount(tx, accountId, lock);
    const row = await repo.selectCampaign(tx, accountId, campaignId, lock);
    if (!row) throw new AppError('CAMPAIGN_NOT_FOUND');
    const current = settingsOf(toCampaign(row, await repo.selectWebhookUrls(tx, accountId, campaignId)));
    const next = mergeSettings(current, update);
    checkSettings(next, plan);
    await repo.updateCampaignRow(tx, accountId, campaignId, { ...rowValues(next), updated_at: Date.now() });
    if (update.webhooks !== undefined) await repo.replaceWebhooks(tx, accountId, campaignId, next.webhooks);
  });
  return { id: campaignId };
}

/**
 * A copy of the campaign (docs/decisions.md, Editing and deleting): every setting, templates
 * and webhook URLs included, under a free "(copy)" name, inactive, with a new webhook signing
 * secret (a secret is never copied). The settings were checked when saved, so they are copied
 * as stored (no DNS look-up of the webhooks again). Answers the copy and its secret.
 */
export async function duplicateCampaign(
  db: Db,
  config: Pick<Config, 'secret'>,
  accountId: string,
  campaignId: string,
): Promise<{ campaign: Campaign; webhookSecret: string }> {
  const id = newId('cmp');
  const webhookSecret = newWebhookSecret();
  await inTransaction(db, async (tx) => {
    await requireAccount(tx, accountId, db.engine === 'postgres');
    const found = await findCampaign(tx, accountId, campaignId);
    if (!found) throw new AppError('CAMPAIGN_NOT_FOUND');
    const taken = new Set(await repo.selectCampaignNamesStartingWith(tx, accountId, copyNamePrefix(found.name)));
    const settings: Settings = { ...settingsOf(found), name: copyName(found.name, taken), active: false };
    const now = Date.now();
    await repo.insertCampaign(tx, accountId, {
      id,
      ...rowValues(settings),
      webhook_secret: sealWebhookSecret(config, webhookSecret),
      created_at: now,
      updated_at: now,
    });
    await repo.replaceWebhooks(tx, accountId, id, settings.webhooks);
  });
  return { campaign: await getCampaign(db, accountId, id), webhookSecret };
}

/** Why the sends of a deleted campaign that had not gone out were cancelled (their `reason`). */
export const DELETED_CAMPAIGN_REASON = 'campaign deleted';

/**
 * Deletes the campaign (docs/decisions.md, Editing and deleting): the row is kept, marked
 * deleted, so its history (sends, outbox, engagements, webhook deliveries) keeps its campaign
 * id; from then on every operation answers "Campaign not found" for it, triggers included. In
 * the same transaction its sends that had not gone out are cancelled ("campaign deleted") and
 * its webhook deliveries still waiting are given up. Answers how many sends were cancelled.
 */
export async function deleteCampaign(db: Db, accountId: string, campaignId: string): Promise<{ cancelledSends: number }> {
  return inTransaction(db, async (tx) => {
    const now = Date.now();
    if ((await repo.markCampaignDeleted(tx, accountId, campaignId, now)) === 0) await notFound(tx, accountId);
    const cancelledSends = await repo.cancelUnsentSends(tx, accountId, campaignId, DELETED_CAMPAIGN_REASON, now);
    await repo.failPendingWebhookDeliveries(tx, accountId, campaignId, DELETED_CAMPAIGN_REASON, now);
    return { cancelledSends };
  });
}

/**
 * The campaign, or undefined when it does not exist in this account (another account's id
 * included). Takes a Kysely so the trigger can call it inside its own transaction; two small
 * indexed queries, run together.
 */
export async function findCampaign(db: Queryable, accountId: string, campaignId: string): Promise<Campaign | undefined> {
  const found = await repo.selectCampaignWithWebhooks(db, accountId, campaignId);
  return found && toCampaign(found.row, found.webhooks);
}

/** Campaigns by id from rows already read (repo.groupCampaignRows), each asked for with its account: another account's campaign is left out. */
export function campaignsFrom(
  campaigns: { accountId: string; campaignId: string }[],
  found: { row: CampaignsTable; webhooks: string[] }[],
): Map<string, Campaign> {
  const accountOf = new Map(campaigns.map((c) => [c.campaignId, c.accountId]));
  const result = new Map<string, Campaign>();
  for (const { row, webhooks } of found) {
    if (accountOf.get(row.id) === row.account_id) result.set(row.id, toCampaign(row, webhooks));
  }
  return result;
}

/** Like findCampaign, but an unknown id is an error (CAMPAIGN_NOT_FOUND, or ACCOUNT_NOT_FOUND). */
export async function getCampaign(db: Db, accountId: string, campaignId: string): Promise<Campaign> {
  return (await findCampaign(db, accountId, campaignId)) ?? notFound(db, accountId);
}

/** The campaign's `whsec_` secret in clear, for signing deliveries and for the admin to copy. */
export async function getWebhookSecret(db: Db, config: Pick<Config, 'secret'>, accountId: string, campaignId: string): Promise<string> {
  const sealed = await repo.selectWebhookSecret(db, accountId, campaignId);
  if (sealed === undefined) return notFound(db, accountId);
  return openWebhookSecret(config, sealed);
}

/** The campaign's sealed (encrypted) `whsec_` secret, or undefined when the campaign is gone (the webhook worker opens it). */
export function findSealedWebhookSecret(db: Queryable, accountId: string, campaignId: string): Promise<string | undefined> {
  return repo.selectWebhookSecret(db, accountId, campaignId);
}

/** The account's campaigns, oldest first, each with its webhooks (two queries in all). */
export async function listCampaigns(db: Db, accountId: string): Promise<Campaign[]> {
  await requireAccount(db, accountId);
  const [rows, hooks] = await Promise.all([repo.selectCampaigns(db, accountId), repo.selectAccountWebhooks(db, accountId)]);
  const byCampaign = new Map<string, string[]>();
  for (const hook of hooks) byCampaign.set(hook.campaign_id, [...(byCampaign.get(hook.campaign_id) ?? []), hook.url]);
  return rows.map((row) => toCampaign(row, byCampaign.get(row.id) ?? []));
}

/** `herald campaign stats`, exactly the members of interfaces.md (all numbers). */
export interface CampaignStats {
  sent: number;
  rejected: number;
  optout: number;
  error: number;
  pending: number;
  cancelled: number;
  /** Waiting to go out or being handed to the channel right now (`queued` + `sending`). */
  queued: number;
  /** Handed to the channel (processed_at set). */
  processed: number;
  /** Accepted by the SMTP server / WhatsApp delivered status (delivered_at set). */
  delivered: number;
  opens: number;
  uniqueOpens: number;
  clicks: number;
  uniqueClicks: number;
  /** Sends whose address the recipient's server refused for good (counted in `error` too). */
  bounced: number;
  /** Contacts who opted out through this campaign's unsubscribe link. */
  unsubscribes: number;
}

export async function campaignStats(db: Db, accountId: string, campaignId: string): Promise<CampaignStats> {
  const [exists, sends, engagements] = await Promise.all([
    repo.campaignExists(db, accountId, campaignId),
    // Real sends only: admin panel test sends stay out of the statistics. Both counts read
    // every send or engagement of the campaign: off SQLite's event loop (db.reads).
    campaignSendCounts(db.reads, accountId, campaignId),
    repo.countEngagements(db.reads, accountId, campaignId),
  ]);
  if (!exists) return notFound(db, accountId);
  const stats: CampaignStats = {
    sent: 0,
    rejected: 0,
    optout: 0,
    error: 0,
    pending: 0,
    cancelled: 0,
    queued: 0,
    processed: 0,
    delivered: 0,
    opens: 0,
    uniqueOpens: 0,
    clicks: 0,
    uniqueClicks: 0,
    bounced: 0,
    unsubscribes: 0,
  };
  for (const group of sends) {
    // A send being handed over right now has not gone out yet: it still counts as queued.
    stats[group.status === 'sending' ? 'queued' : group.status] += group.count;
    stats.processed += group.processed;
    stats.delivered += group.delivered;
    stats.bounced += group.bounced;
  }
  for (const group of engagements) {
    if (group.kind === 'open') [stats.opens, stats.uniqueOpens] = [group.total, group.unique];
    else if (group.kind === 'click') [stats.clicks, stats.uniqueClicks] = [group.total, group.unique];
    else if (group.kind === 'unsubscribe') stats.unsubscribes = group.total;
  }
  return stats;
}

/** A link of the campaign's emails and how often it was clicked. */
export interface LinkClicks {
  url: string;
  clicks: number;
  /** Distinct sends whose recipient clicked it. */
  uniqueClicks: number;
}

/** How many links the statistics list: the most clicked ones. */
export const MAX_STATS_LINKS = 100;

/** Clicks per link, the most clicked first (at most MAX_STATS_LINKS). 404s like campaignStats. */
export async function campaignLinkClicks(db: Db, accountId: string, campaignId: string): Promise<LinkClicks[]> {
  const [exists, links] = await Promise.all([
    repo.campaignExists(db, accountId, campaignId),
    repo.countClicksByLink(db, accountId, campaignId, MAX_STATS_LINKS),
  ]);
  if (!exists) return notFound(db, accountId);
  return links;
}

/** Whether the campaign exists in this account (another account's id: false). */
export async function campaignExists(db: Queryable, accountId: string, campaignId: string): Promise<boolean> {
  return repo.campaignExists(db, accountId, campaignId);
}

/**
 * Switches off the account's active WhatsApp campaigns (the account moved to the free plan).
 * Takes the caller's transaction: see campaigns.repo deactivateWhatsappCampaigns for the race.
 */
export async function deactivateWhatsappCampaigns(db: Queryable, accountId: string, now: number): Promise<void> {
  await repo.deactivateWhatsappCampaigns(db, accountId, now);
}

/** The plan of an existing account (ACCOUNT_NOT_FOUND otherwise). */
async function requireAccount(db: Queryable, accountId: string, lock = false): Promise<'free' | 'pro'> {
  const plan = await repo.selectAccountPlan(db, accountId, lock);
  if (plan === undefined) throw new AppError('ACCOUNT_NOT_FOUND');
  return plan;
}

/** An unknown account says so; an unknown campaign of a real account is CAMPAIGN_NOT_FOUND. */
async function notFound(db: Queryable, accountId: string): Promise<never> {
  await requireAccount(db, accountId);
  throw new AppError('CAMPAIGN_NOT_FOUND');
}

/** Create needs a name and a channel; TypeScript says so, but the admin API and CLI pass runtime values. */
function requireCreateMembers(input: CampaignInput): CampaignInput {
  const problems = [];
  if (typeof input.name !== 'string') problems.push({ path: '/name', message: 'name is required' });
  if (typeof input.channel !== 'string') problems.push({ path: '/channel', message: 'channel is required (email or whatsapp)' });
  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
  return input;
}

function settingsOf(campaign: Campaign): Settings {
  const { id: _id, accountId: _account, createdAt: _created, updatedAt: _updated, ...settings } = campaign;
  return settings;
}

function rowValues(s: Settings): Omit<CampaignsTable, 'id' | 'account_id' | 'webhook_secret' | 'created_at' | 'updated_at'> {
  return {
    name: s.name,
    channel: s.channel,
    schedule: s.schedule,
    mode: s.mode,
    delay_seconds: s.delaySeconds,
    reentry: s.reentry ? 1 : 0,
    cooldown_days: s.cooldownDays,
    active: s.active ? 1 : 0,
    email_from: s.email.from,
    email_subject: s.email.subject,
    email_html: s.email.html,
    email_text: s.email.text,
    whatsapp_template: s.whatsapp.template,
    whatsapp_language: s.whatsapp.language,
    whatsapp_params: JSON.stringify(s.whatsapp.params),
  };
}
