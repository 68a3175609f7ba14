import type { Config } from '../../../config.js';
import type { Db } from '../../../db/connect.js';
import { DeliveryError } from '../../../dispatcher/channels/channel.js';
import { renderEmail } from '../../../dispatcher/channels/email-render.js';
import { buildWhatsAppMessage } from '../../../dispatcher/channels/whatsapp.js';
import { AppError, invalid } from '../../../errors.js';
import type { Campaign } from '../../campaigns/campaign.js';
import { checkUpdate, mergeSettings, type CampaignUpdate } from '../../campaigns/campaign-settings.js';
import { getCampaign } from '../../campaigns/campaigns.service.js';
import { getContactProfile } from '../../contacts/contacts.service.js';
import { unsubscribeUrl } from '../../unsubscribe/unsubscribe-token.js';

/** Stands for the sender of a draft that has none yet: the preview shows subject and bodies, never the sender. */
const PREVIEW_FROM = 'preview@herald.invalid';
/** Names no send: the preview's unsubscribe link is well-formed and leads nowhere. */
const PREVIEW_SEND_ID = 'preview';

export type Preview = { subject: string; html: string | null; text: string } | { template: string; language: string; params: string[] };

/**
 * `POST /campaigns/:id/preview`: the message the contact would get, rendered by the channel's
 * own renderer, with the unsaved edits of the form applied; nothing is stored or sent. The
 * edits are checked like a save (paths under `/campaign`); webhooks play no part in a message
 * and are ignored, so a preview never resolves DNS.
 */
export async function previewCampaign(
  db: Db,
  config: Pick<Config, 'publicUrl' | 'secret' | 'webhookAllowPrivate'>,
  accountId: string,
  campaignId: string,
  input: { contactId: string; campaign?: CampaignUpdate },
): Promise<Preview> {
  const stored = await getCampaign(db, accountId, campaignId);
  const contact = await getContactProfile(db, accountId, { id: input.contactId });
  if (!contact) throw new AppError('LEAD_NOT_FOUND');
  const { webhooks: _ignored, ...edits } = input.campaign ?? {};
  await underCampaign(() => checkUpdate(edits, config));
  const campaign: Campaign = { ...stored, ...mergeSettings(stored, edits) };
  const unsubscribe = unsubscribeUrl(config, PREVIEW_SEND_ID);

  try {
    if (campaign.channel === 'email') {
      if (!campaign.email.html && !campaign.email.text) throw invalid('/campaign/html', 'nothing to preview: the campaign has no html or text');
      const email = await renderEmail({
        campaign: { ...campaign, email: { ...campaign.email, from: campaign.email.from ?? PREVIEW_FROM } },
        contact,
        to: contact.emails[0] ?? '',
        sendId: PREVIEW_SEND_ID,
        unsubscribeUrl: unsubscribe,
      });
      return { subject: email.subject, html: email.html, text: email.text };
    }
    const message = await buildWhatsAppMessage(
      {
        send: { id: PREVIEW_SEND_ID, accountId, campaignId, contactId: contact.id, attempts: 0 },
        campaign,
        contact,
        to: contact.phones[0] ?? '',
        account: { id: accountId, whatsapp: null },
      },
      unsubscribe,
    );
    const params = message.template.components?.[0]?.parameters.map((p) => p.text) ?? [];
    return { template: message.template.name, language: message.template.language.code, params };
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
