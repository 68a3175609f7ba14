import { DeliveryError } from '../channels/channel.js';
import type { Campaign } from '../modules/campaigns/campaign.js';
import type { ContactProfile } from '../modules/contacts/contacts.service.js';
import { renderTemplate } from './liquid.js';
import type { PreviewInput, WhatsAppPreview } from './preview.js';
import { type TriggerData, templateVariables } from './variables.js';

/** The JSON body of a Cloud API template message (`POST /<phone-number-id>/messages`). */
export interface WhatsAppTemplateMessage {
  messaging_product: 'whatsapp';
  recipient_type: 'individual';
  to: string;
  type: 'template';
  template: {
    name: string;
    language: { code: string };
    components?: { type: 'body'; parameters: { type: 'text'; text: string }[] }[];
  };
}

export interface WhatsAppRenderInput {
  campaign: Campaign;
  contact: ContactProfile;
  /** The contact's phone number (E.164). */
  to: string;
  unsubscribeUrl: string;
  /** The trigger call's `data` (`{{ trigger.* }}` in parameters); absent or null: none. */
  trigger?: TriggerData | null;
}

/**
 * The request body for one send (pure: no I/O), shared by the Cloud API transport and the
 * outbox (which keeps exactly what would have been sent). Parameters render as plain text; the
 * API refuses newlines, tabs and runs of more than 4 spaces in them, so those become single
 * spaces. Throws a permanent DeliveryError when the campaign cannot make a message.
 */
export async function renderWhatsAppMessage(input: WhatsAppRenderInput): Promise<WhatsAppTemplateMessage> {
  const { campaign } = input;
  const name = campaign.whatsapp.template;
  const language = campaign.whatsapp.language;
  if (!name || !language) throw new DeliveryError('campaign has no WhatsApp template and language', false);
  const variables = templateVariables(input.contact, campaign, input.unsubscribeUrl, input.trigger);
  let texts: string[];
  try {
    texts = campaign.whatsapp.params.map((source) => renderTemplate(source, variables));
  } catch (err) {
    throw new DeliveryError(`WhatsApp parameter failed to render: ${(err as Error).message.split('\n')[0]}`, false);
  }
  const message: WhatsAppTemplateMessage = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    // The Cloud API takes the number as digits, country code first.
    to: input.to.replace(/\D/g, ''),
    type: 'template',
    template: { name, language: { code: language } },
  };
  if (texts.length > 0) {
    message.template.components = [
      {
        type: 'body',
        parameters: texts.map((text) => ({
          type: 'text',
          text: text
            .replace(/[\r\n\t]+/g, ' ')
            .replace(/ {5,}/g, ' ')
            .trim(),
        })),
      },
    ];
  }
  return message;
}

/** The template message as the admin preview shows it: name, language and rendered parameters. */
export async function previewWhatsApp({ campaign, contact, unsubscribeUrl, trigger }: PreviewInput): Promise<WhatsAppPreview> {
  const message = await renderWhatsAppMessage({ campaign, contact, to: contact.phones[0] ?? '', unsubscribeUrl, trigger });
  const params = message.template.components?.[0]?.parameters.map((p) => p.text) ?? [];
  return { template: message.template.name, language: message.template.language.code, params };
}
