import { MAX_WEBHOOKS } from '../../../../contract/constants';
import { CHANNEL_UI } from '../../channels/registry';
import type { Campaign, CampaignInput } from '../../types';
import type { CampaignForm } from './form';

export type { CampaignForm };

export { MAX_WEBHOOKS };

export const STARTER_HTML = `<p>Hello {{ contact.name }},</p>
<p>Thanks for signing up.</p>`;

export function emptyForm(): CampaignForm {
  return {
    name: '',
    channel: 'email',
    schedule: 'api',
    mode: 'immediate',
    delaySeconds: '60',
    reentry: false,
    cooldownDays: '0',
    from: '',
    subject: '',
    html: STARTER_HTML,
    text: '',
    whatsappTemplate: '',
    language: 'en',
    whatsappParams: [],
    webhooks: [],
  };
}

export function formOf(c: Campaign): CampaignForm {
  return {
    name: c.name,
    channel: c.channel,
    schedule: c.schedule,
    mode: c.mode,
    delaySeconds: c.mode === 'delay' ? String(c.delaySeconds) : '60',
    reentry: c.reentry,
    cooldownDays: String(c.cooldownDays),
    from: c.email.from ?? '',
    subject: c.email.subject ?? '',
    html: c.email.html ?? '',
    text: c.email.text ?? '',
    whatsappTemplate: c.whatsapp.template ?? '',
    language: c.whatsapp.language ?? '',
    whatsappParams: [...c.whatsapp.params],
    webhooks: [...c.webhooks],
  };
}

/** A whole number as a number; anything else as typed, so the API names the field at fault. */
function wholeOr(text: string): number | string {
  const t = text.trim();
  return /^\d+$/.test(t) ? Number(t) : t;
}

const orNull = (text: string) => (text.trim() === '' ? null : text);

/** The members POST/PATCH /campaigns take. Settings that only apply under another are reset with it. */
export function inputOf(f: CampaignForm): CampaignInput {
  return {
    name: f.name.trim(),
    channel: f.channel,
    schedule: f.schedule,
    mode: f.mode,
    delaySeconds: f.mode === 'delay' ? wholeOr(f.delaySeconds) : 0,
    reentry: f.reentry,
    cooldownDays: f.reentry ? wholeOr(f.cooldownDays) : 0,
    from: orNull(f.from.trim()),
    subject: orNull(f.subject.trim()),
    html: orNull(f.html),
    text: orNull(f.text),
    whatsappTemplate: orNull(f.whatsappTemplate.trim()),
    language: orNull(f.language.trim()),
    whatsappParams: f.whatsappParams,
    // Webhooks are for email campaigns only; blank rows are ignored.
    webhooks: CHANNEL_UI[f.channel].webhooks ? f.webhooks.map((w) => w.trim()).filter(Boolean) : [],
  };
}

/** Just the message content, for previewing unsaved edits. */
export function contentOf(f: CampaignForm): Partial<CampaignInput> {
  return CHANNEL_UI[f.channel].content(inputOf(f));
}

export function sameForm(a: CampaignForm, b: CampaignForm): boolean {
  return JSON.stringify(inputOf(a)) === JSON.stringify(inputOf(b));
}

/** Paths the settings form shows next to a field. */
export const SHOWN_PATHS = [
  '/name',
  '/channel',
  '/schedule',
  '/mode',
  '/delaySeconds',
  '/reentry',
  '/cooldownDays',
  '/from',
  '/subject',
  '/html',
  '/text',
  '/whatsappTemplate',
  '/language',
  '/whatsappParams',
  '/whatsappParams/*',
  '/webhooks',
  '/webhooks/*',
];
