import validator from 'validator';
import { CHANNEL_REGISTRY } from '../../channels/registry.js';
import type { Config } from '../../config.js';
import { AppError, type Problem } from '../../errors.js';
import { checkWebhookUrl, UnsafeUrlError } from '../../net/ssrf.js';
import { checkTemplate, TemplateError } from '../../rendering/liquid.js';
import { describeLiquidError } from '../../rendering/liquid-errors.js';
import type { Campaign } from './campaign.js';

/**
 * The rules of a campaign's configuration (service-spec.md "API-triggered campaign",
 * decisions.md Limits and Plans), kept apart from storage so create, update and the future
 * admin panel apply exactly the same ones. Paths in problems are the members of CampaignInput.
 */

import {
  CHANNELS,
  type Channel,
  MAX_WEBHOOKS,
  CAMPAIGN_MODES as MODES,
  type CampaignMode as Mode,
  CAMPAIGN_SCHEDULES as SCHEDULES,
  type CampaignSchedule as Schedule,
} from '../../contract/constants.js';

export { CHANNELS, type Channel, MAX_WEBHOOKS, MODES, type Mode, SCHEDULES, type Schedule };

/** decisions.md: delay 1 s to 30 days, cooldown 0 to 3650 days, names 255 characters. */
export const MAX_DELAY_SECONDS = 30 * 24 * 60 * 60;
export const MAX_COOLDOWN_DAYS = 3650;
export const MAX_NAME_LENGTH = 255;

/**
 * What a caller may set. On update every member is optional and only those given change;
 * for the optional texts, null or '' clears the stored value.
 */
export interface CampaignUpdate {
  name?: string;
  channel?: Channel;
  schedule?: Schedule;
  mode?: Mode;
  delaySeconds?: number;
  reentry?: boolean;
  cooldownDays?: number;
  active?: boolean;
  from?: string | null;
  subject?: string | null;
  html?: string | null;
  text?: string | null;
  whatsappTemplate?: string | null;
  language?: string | null;
  /** Replaces the whole list: one Liquid string per body parameter, in order. */
  whatsappParams?: string[];
  /** Replaces the whole list (up to 3 URLs, email campaigns only). */
  webhooks?: string[];
}

export interface CampaignInput extends CampaignUpdate {
  name: string;
  channel: Channel;
}

/** The stored settings of a campaign: the Campaign type without ids and timestamps. */
export type Settings = Omit<Campaign, 'id' | 'accountId' | 'createdAt' | 'updatedAt'>;

/** interfaces.md defaults: schedule api, mode immediate, delay 0, re-entry off, cooldown 0, not active. */
export function defaultSettings(name: string, channel: Channel): Settings {
  return {
    name,
    channel,
    schedule: 'api',
    mode: 'immediate',
    delaySeconds: 0,
    reentry: false,
    cooldownDays: 0,
    active: false,
    email: { from: null, subject: null, html: null, text: null },
    whatsapp: { template: null, language: null, params: [] },
    webhooks: [],
  };
}

const fail = (problems: Problem[]) => {
  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
};

/**
 * Checks each member given, on its own: types, ranges, templates, addresses and webhook URLs
 * (which may resolve DNS: call it outside any transaction). Reports every problem at once so
 * one correction round is enough.
 */
export async function checkUpdate(input: CampaignUpdate, config: Pick<Config, 'webhookAllowPrivate'>): Promise<void> {
  const problems: Problem[] = [];
  const bad = (path: string, message: string) => problems.push({ path, message });

  if (input.name !== undefined) {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.length < 1 || name.length > MAX_NAME_LENGTH) bad('/name', `name must be 1 to ${MAX_NAME_LENGTH} characters`);
  }
  if (input.channel !== undefined && !CHANNELS.includes(input.channel)) bad('/channel', `channel must be ${CHANNELS.join(' or ')}`);
  if (input.schedule !== undefined && !SCHEDULES.includes(input.schedule)) bad('/schedule', 'schedule must be api or manual');
  if (input.mode !== undefined && !MODES.includes(input.mode)) bad('/mode', 'mode must be immediate or delay');
  if (input.delaySeconds !== undefined && !isWhole(input.delaySeconds, 0, MAX_DELAY_SECONDS)) {
    bad('/delaySeconds', `delay must be a whole number of seconds, at most ${MAX_DELAY_SECONDS} (30 days)`);
  }
  if (input.cooldownDays !== undefined && !isWhole(input.cooldownDays, 0, MAX_COOLDOWN_DAYS)) {
    bad('/cooldownDays', `cooldown must be a whole number of days from 0 to ${MAX_COOLDOWN_DAYS}`);
  }
  for (const flag of ['reentry', 'active'] as const) {
    if (input[flag] !== undefined && typeof input[flag] !== 'boolean') bad(`/${flag}`, `${flag} must be true or false`);
  }

  const from = clean(input.from);
  if (from && parseFrom(from) === undefined)
    bad('/from', `'${from}' is not a valid sender: use name@example.com or Name <name@example.com>`);
  const subject = clean(input.subject);
  // A line break in a header would let a template inject further headers.
  if (subject && /[\r\n]/.test(subject)) bad('/subject', 'subject must be one line');
  for (const member of ['subject', 'html', 'text'] as const) {
    const source = body(input[member]);
    if (source) templateProblem(source, `/${member}`, TEMPLATE_LABELS[member], bad);
  }

  const template = clean(input.whatsappTemplate);
  // Meta's rule for template names: lowercase letters, digits and underscores.
  if (template && !/^[a-z0-9_]{1,512}$/.test(template))
    bad('/whatsappTemplate', 'template name must be lowercase letters, digits and underscores');
  const language = clean(input.language);
  // Cloud API language codes: `en`, `en_US`, `pt_BR`, `zh_HK` ...
  if (language && !/^[a-z]{2,3}(_[A-Za-z0-9]{2,4})?$/.test(language))
    bad('/language', `'${language}' is not a language code (e.g. en or en_US)`);
  if (input.whatsappParams !== undefined) {
    if (!Array.isArray(input.whatsappParams)) bad('/whatsappParams', 'whatsappParams must be a list of strings');
    else {
      input.whatsappParams.forEach((param, i) => {
        // The Cloud API refuses an empty text parameter: catch it now rather than at send time.
        if (typeof param !== 'string' || param.trim() === '') bad(`/whatsappParams/${i}`, 'a body parameter must be a non-empty string');
        else templateProblem(param, `/whatsappParams/${i}`, `Parameter ${i + 1}`, bad);
      });
    }
  }

  if (input.webhooks !== undefined) {
    if (!Array.isArray(input.webhooks)) bad('/webhooks', 'webhooks must be a list of URLs');
    else {
      if (input.webhooks.length > MAX_WEBHOOKS)
        bad('/webhooks', `a campaign has at most ${MAX_WEBHOOKS} webhooks, got ${input.webhooks.length}`);
      // Resolved in parallel, reported in list order.
      const verdicts = await Promise.all(input.webhooks.map((url) => webhookProblem(url, config.webhookAllowPrivate)));
      verdicts.forEach((message, i) => message !== undefined && bad(`/webhooks/${i}`, message));
    }
  }
  fail(problems);
}

/**
 * The stored settings with an update applied. A setting that only means something under
 * another one returns to its default when that other one is switched off and the caller does
 * not set it in the same update: mode immediate resets the delay, re-entry off the cooldown.
 */
export function mergeSettings(base: Settings, input: CampaignUpdate): Settings {
  const next: Settings = structuredClone(base);
  if (input.name !== undefined) next.name = input.name.trim();
  if (input.channel !== undefined) next.channel = input.channel;
  if (input.schedule !== undefined) next.schedule = input.schedule;
  if (input.mode !== undefined) next.mode = input.mode;
  if (input.delaySeconds !== undefined) next.delaySeconds = input.delaySeconds;
  else if (input.mode === 'immediate') next.delaySeconds = 0;
  if (input.reentry !== undefined) next.reentry = input.reentry;
  if (input.cooldownDays !== undefined) next.cooldownDays = input.cooldownDays;
  else if (input.reentry === false) next.cooldownDays = 0;
  if (input.active !== undefined) next.active = input.active;
  if (input.from !== undefined) next.email.from = clean(input.from) ? parseFrom(clean(input.from)!)! : null;
  if (input.subject !== undefined) next.email.subject = clean(input.subject);
  if (input.html !== undefined) next.email.html = body(input.html);
  if (input.text !== undefined) next.email.text = body(input.text);
  if (input.whatsappTemplate !== undefined) next.whatsapp.template = clean(input.whatsappTemplate);
  if (input.language !== undefined) next.whatsapp.language = clean(input.language);
  if (input.whatsappParams !== undefined) next.whatsapp.params = [...input.whatsappParams];
  if (input.webhooks !== undefined) next.webhooks = [...input.webhooks];
  return next;
}

/**
 * Rules between settings, on the merged result (so an update is judged by what it leaves
 * behind). `plan` is the account's, read in the same transaction as the write.
 */
export function checkSettings(s: Settings, plan: 'free' | 'pro'): void {
  const problems: Problem[] = [];
  const bad = (path: string, message: string) => problems.push({ path, message });

  if (s.mode === 'delay' && s.delaySeconds < 1) {
    bad('/delaySeconds', `delay mode needs a delay from 1 to ${MAX_DELAY_SECONDS} seconds (30 days)`);
  }
  // An explicit delay without delay mode is almost always a forgotten mode: say so.
  if (s.mode === 'immediate' && s.delaySeconds !== 0) bad('/delaySeconds', 'a delay applies only in delay mode: set mode to delay');
  // The cooldown is a re-entry setting (spec: "set together with re-entry"): alone it means nothing.
  if (!s.reentry && s.cooldownDays !== 0) bad('/cooldownDays', 'a cooldown applies only when re-entry is on: turn re-entry on');
  const channel = CHANNEL_REGISTRY[s.channel];
  if (!channel.webhooks && s.webhooks.length > 0) {
    bad('/webhooks', 'webhooks are for email campaigns only: remove them (webhook none) to use another channel');
  }

  if (s.active) {
    const missing = missingForActivation(s);
    if (missing.length > 0) bad('/active', `cannot activate: the ${s.channel} campaign has no ${missing.join(', ')}`);
    // decisions.md, Plans: a free account can create and edit a WhatsApp campaign, never activate it.
    if (channel.planToActivate === 'pro' && plan !== 'pro') {
      bad('/active', `cannot activate: ${channel.label} campaigns need the pro plan and this account is on the free plan`);
    }
  }
  fail(problems);
}

/** What an active campaign must have to send anything (each channel says, in the registry). */
export function missingForActivation(s: Settings): string[] {
  return CHANNEL_REGISTRY[s.channel].missingForActivation(s);
}

/**
 * `addr@example.com` or `Name <addr@example.com>`, in the stored form (trimmed, one space
 * before `<`); undefined when invalid. The address part is checked by the same validator as
 * contact emails; the display name must stay on one line (it becomes a header).
 */
export function parseFrom(raw: string): string | undefined {
  const value = raw.trim();
  const named = /^(.*?)\s*<([^<>\s]+)>$/.exec(value);
  const address = named ? named[2]! : value;
  const name = named ? named[1]!.trim() : '';
  if (!validator.isEmail(address) || /[\r\n<>]/.test(name)) return undefined;
  return name ? `${name} <${address}>` : address;
}

async function webhookProblem(url: unknown, allowPrivate: boolean): Promise<string | undefined> {
  if (typeof url !== 'string') return 'a webhook must be a URL';
  try {
    await checkWebhookUrl(url, allowPrivate);
    return undefined;
  } catch (err) {
    if (err instanceof UnsafeUrlError) return err.message;
    throw err;
  }
}

/** The names the admin panel gives the template fields: a Liquid error says which one it is in. */
export const TEMPLATE_LABELS = { subject: 'Subject', html: 'HTML body', text: 'Plain-text body' } as const;

/** "Subject, line 1: tag 'iff' is not defined" (rendering/liquid-errors.ts), at the field's path. */
function templateProblem(source: string, path: string, label: string, bad: (path: string, message: string) => void): void {
  try {
    checkTemplate(source);
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    bad(path, describeLiquidError(err, label));
  }
}

/** null, undefined and blank all mean "no value". */
function clean(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** Message bodies keep their white space (a text part may start with a blank line on purpose). */
function body(value: string | null | undefined): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function isWhole(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}
