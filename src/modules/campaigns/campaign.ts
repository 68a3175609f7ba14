import type { CampaignMode, CampaignSchedule, Channel } from '../../contract/constants.js';
import type { CampaignsTable } from '../../db/schema.js';

/** A campaign as the rest of the app sees it (never the encrypted webhook secret). */
export interface Campaign {
  id: string;
  accountId: string;
  name: string;
  channel: Channel;
  schedule: CampaignSchedule;
  mode: CampaignMode;
  delaySeconds: number;
  reentry: boolean;
  cooldownDays: number;
  active: boolean;
  email: { from: string | null; subject: string | null; html: string | null; text: string | null };
  /** `params`: one Liquid string per body parameter of the approved template, in order. */
  whatsapp: { template: string | null; language: string | null; params: string[] };
  /** Up to 3 webhook URLs, in order. */
  webhooks: string[];
  createdAt: number;
  updatedAt: number;
}

export function toCampaign(row: CampaignsTable, webhooks: string[]): Campaign {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    channel: row.channel,
    schedule: row.schedule,
    mode: row.mode,
    delaySeconds: row.delay_seconds,
    reentry: row.reentry === 1,
    cooldownDays: row.cooldown_days,
    active: row.active === 1,
    email: { from: row.email_from, subject: row.email_subject, html: row.email_html, text: row.email_text },
    whatsapp: { template: row.whatsapp_template, language: row.whatsapp_language, params: JSON.parse(row.whatsapp_params) as string[] },
    webhooks,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A campaign as JSON for the CLI and the admin API: times in ISO 8601 (decisions.md, Time). */
export type CampaignJson = Omit<Campaign, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string };

export function presentCampaign(campaign: Campaign): CampaignJson {
  return { ...campaign, createdAt: new Date(campaign.createdAt).toISOString(), updatedAt: new Date(campaign.updatedAt).toISOString() };
}
