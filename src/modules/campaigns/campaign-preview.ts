import { DeliveryError } from '../../channels/channel.js';
import { CHANNEL_REGISTRY } from '../../channels/registry.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { AppError, invalid } from '../../errors.js';
import { checkTriggerDataSize } from '../../json-limits.js';
import { type MessagePreview, PREVIEW_SEND_ID } from '../../rendering/preview.js';
import { getContactProfile } from '../contacts/contacts.service.js';
import { unsubscribeUrl } from '../unsubscribe/unsubscribe-token.js';
import type { Campaign } from './campaign.js';
import { type CampaignUpdate, checkUpdate, mergeSettings } from './campaign-settings.js';
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
  config: Pick<Config, 'publicUrl' | 'secret' | 'webhookAllowPrivate'>,
  accountId: string,
  campaignId: string,
  input: { contactId: string; campaign?: CampaignUpdate; data?: Record<string, unknown> },
): Promise<Preview> {
  if (input.data !== undefined) checkTriggerDataSize(input.data, '/data');
  const stored = await getCampaign(db, accountId, campaignId);
  const contact = await getContactProfile(db, accountId, { id: input.contactId });
  if (!contact) throw new AppError('LEAD_NOT_FOUND');
  const { webhooks: _ignored, ...edits } = input.campaign ?? {};
  await underCampaign(() => checkUpdate(edits, config));
  const campaign: Campaign = { ...stored, ...mergeSettings(stored, edits) };

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
