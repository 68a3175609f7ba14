import { DeliveryError } from '../../channels/channel.js';
import { CHANNEL_REGISTRY } from '../../channels/registry.js';
import type { Config } from '../../config.js';
import type { Channel } from '../../contract/constants.js';
import type { Db } from '../../db/connect.js';
import { AppError, invalid } from '../../errors.js';
import { checkTriggerDataSize } from '../../json-limits.js';
import { type MessagePreview, PREVIEW_SEND_ID } from '../../rendering/preview.js';
import { getContactProfile } from '../contacts/contacts.service.js';
import { unsubscribeUrl } from '../unsubscribe/unsubscribe-token.js';
import type { Campaign } from './campaign.js';
import { type CampaignUpdate, checkUpdate, defaultSettings, mergeSettings } from './campaign-settings.js';
import { getCampaign } from './campaigns.service.js';

export type Preview = MessagePreview;

/**
 * `POST /campaigns/:id/preview`: the message the contact would get, rendered by the channel's
 * own renderer (src/rendering/), with the unsaved edits of the form applied; nothing is stored
 * or sent. The edits are checked like a save (paths under `/campaign`); webhooks play no part
 * in a message and are ignored, so a preview never resolves DNS. `data` is sample trigger data
 * (`{{ trigger.* }}`, the limits of a trigger's); without it, trigger.* renders empty.
 */
export async function previewCampaign(
  db: Db,
  config: PreviewConfig,
  accountId: string,
  campaignId: string,
  input: { contactId: string; campaign?: CampaignUpdate; data?: Record<string, unknown> },
): Promise<Preview> {
  if (input.data !== undefined) checkTriggerDataSize(input.data, '/data');
  const stored = await getCampaign(db, accountId, campaignId);
  return previewWith(db, config, stored, input);
}

/** Stands for the id of a campaign not saved yet (`{{ campaign.id }}` in a draft's preview). */
export const DRAFT_CAMPAIGN_ID = 'draft';

/**
 * `POST /campaigns/preview`: the preview of a campaign not saved yet (issue 13, Authoring). The
 * form's content is applied to a new campaign's defaults (interfaces.md) and checked like a
 * save, paths under `/campaign`; the account is the session's, so the contact must be its own.
 */
export async function previewDraft(
  db: Db,
  config: PreviewConfig,
  accountId: string,
  input: { contactId: string; campaign: CampaignUpdate & { channel: Channel }; data?: Record<string, unknown> },
): Promise<Preview> {
  if (input.data !== undefined) checkTriggerDataSize(input.data, '/data');
  const now = Date.now();
  const draft: Campaign = {
    ...defaultSettings(input.campaign.name?.trim() || 'New campaign', input.campaign.channel),
    id: DRAFT_CAMPAIGN_ID,
    accountId,
    createdAt: now,
    updatedAt: now,
  };
  return previewWith(db, config, draft, input);
}

type PreviewConfig = Pick<Config, 'publicUrl' | 'secret' | 'webhookAllowPrivate'>;

/** The preview of `base` with the form's edits applied, for one contact of the same account. */
async function previewWith(
  db: Db,
  config: PreviewConfig,
  base: Campaign,
  input: { contactId: string; campaign?: CampaignUpdate; data?: Record<string, unknown> },
): Promise<Preview> {
  const contact = await getContactProfile(db, base.accountId, { id: input.contactId });
  if (!contact) throw new AppError('LEAD_NOT_FOUND');
  const { webhooks: _ignored, ...edits } = input.campaign ?? {};
  await underCampaign(() => checkUpdate(edits, config));
  const campaign: Campaign = { ...base, ...mergeSettings(base, edits) };

  try {
    return await CHANNEL_REGISTRY[campaign.channel].preview({
      campaign,
      contact,
      unsubscribeUrl: unsubscribeUrl(config, PREVIEW_SEND_ID),
      trigger: input.data,
    });
  } catch (err) {
    // What would end a real send in error (no template, a template that fails on this contact's data).
    if (err instanceof DeliveryError) throw invalid('/campaign', err.message);
    throw err;
  }
}

/** The edits sit under `campaign` in the request: their problems' paths say so. */
async function underCampaign(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (err instanceof AppError && err.code === 'VALIDATION') {
      throw new AppError('VALIDATION', { details: (err.details ?? []).map((d) => ({ ...d, path: `/campaign${d.path}` })) });
    }
    throw err;
  }
}
