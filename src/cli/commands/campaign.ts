import { presentCampaign } from '../../modules/campaigns/campaign.js';
import type { Channel, Mode, Schedule } from '../../modules/campaigns/campaign-settings.js';
import {
  type CampaignUpdate,
  campaignStats,
  createCampaign,
  listCampaigns,
  updateCampaign,
} from '../../modules/campaigns/campaigns.service.js';
import { campaignDailyStats } from '../../modules/campaigns/daily-stats.js';
import { type CommandGroup, type OptionSpec, optionalString, parseBool, parseCount, required, UsageError } from '../command.js';

/**
 * `herald campaign create|update|stats|stats-daily|list` (interfaces.md). Values are passed through as
 * given: the service is the one place that judges them, so the CLI and the admin panel refuse
 * the same things with the same messages.
 */

/** `stats-daily` without --days: the last 30 days, as the admin panel shows by default. */
const DEFAULT_DAYS = 30;

/** Options shared by create and update (update spells the two booleans as true|false values). */
const SETTINGS: Record<string, OptionSpec> = {
  name: { type: 'string' },
  channel: { type: 'string' },
  schedule: { type: 'string' },
  mode: { type: 'string' },
  delay: { type: 'string' },
  cooldown: { type: 'string' },
  from: { type: 'string' },
  subject: { type: 'string' },
  html: { type: 'string' },
  text: { type: 'string' },
  'whatsapp-template': { type: 'string' },
  language: { type: 'string' },
  'whatsapp-param': { type: 'string', multiple: true },
  webhook: { type: 'string', multiple: true },
};

function list(values: Record<string, unknown>, name: string): string[] | undefined {
  const value = values[name] as string[] | undefined;
  if (value === undefined) return undefined;
  // `--webhook none` (alone) clears the list, as `none` clears values elsewhere in the CLI.
  // A literal WhatsApp parameter `none` can still be written as {{ "none" }}.
  if (value.length === 1 && value[0] === 'none') return [];
  if (value.includes('none')) throw new UsageError(`--${name} none clears the list and cannot be combined with other values`);
  return value;
}

function settings(v: Record<string, unknown>): CampaignUpdate {
  return {
    name: optionalString(v, 'name'),
    channel: optionalString(v, 'channel') as Channel | undefined,
    schedule: optionalString(v, 'schedule') as Schedule | undefined,
    mode: optionalString(v, 'mode') as Mode | undefined,
    delaySeconds: parseCount(optionalString(v, 'delay'), 'delay', false) ?? undefined,
    cooldownDays: parseCount(optionalString(v, 'cooldown'), 'cooldown', false) ?? undefined,
    from: optionalString(v, 'from'),
    subject: optionalString(v, 'subject'),
    html: optionalString(v, 'html'),
    text: optionalString(v, 'text'),
    whatsappTemplate: optionalString(v, 'whatsapp-template'),
    language: optionalString(v, 'language'),
    whatsappParams: list(v, 'whatsapp-param'),
    webhooks: list(v, 'webhook'),
  };
}

/** Members left undefined mean "not given": drop them so the update touches nothing else. */
function given<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export const campaign: CommandGroup = {
  create: {
    options: { account: { type: 'string' }, ...SETTINGS, reentry: { type: 'boolean' }, activate: { type: 'boolean' } },
    run: ({ db, config }, v) =>
      createCampaign(db, config, required(v, 'account'), {
        ...given(settings(v)),
        name: required(v, 'name'),
        channel: required(v, 'channel') as Channel,
        reentry: v.reentry === true,
        active: v.activate === true,
      }),
  },
  update: {
    options: {
      account: { type: 'string' },
      campaign: { type: 'string' },
      ...SETTINGS,
      reentry: { type: 'string' },
      active: { type: 'string' },
      activate: { type: 'boolean' },
    },
    run: ({ db, config }, v) => {
      let active = parseBool(optionalString(v, 'active'), 'active');
      // `--activate` is the create flag; accepted here too since update takes "any create option".
      if (v.activate === true) {
        if (active === false) throw new UsageError('--activate and --active false contradict each other');
        active = true;
      }
      return updateCampaign(db, config, required(v, 'account'), required(v, 'campaign'), {
        ...given(settings(v)),
        ...given({ reentry: parseBool(optionalString(v, 'reentry'), 'reentry'), active }),
      });
    },
  },
  stats: {
    options: { account: { type: 'string' }, campaign: { type: 'string' } },
    run: async ({ db }, v) => interfaceStats(await campaignStats(db, required(v, 'account'), required(v, 'campaign'))),
  },
  // A command of its own, so `campaign stats` keeps exactly the shape interfaces.md gives it.
  'stats-daily': {
    options: { account: { type: 'string' }, campaign: { type: 'string' }, days: { type: 'string' } },
    run: async ({ db }, v) => ({
      days: await campaignDailyStats(
        db,
        required(v, 'account'),
        required(v, 'campaign'),
        parseCount(optionalString(v, 'days'), 'days', false) ?? DEFAULT_DAYS,
      ),
    }),
  },
  list: {
    options: { account: { type: 'string' } },
    run: async ({ db }, v) => ({ items: (await listCampaigns(db, required(v, 'account'))).map(presentCampaign) }),
  },
};

/**
 * Exactly the members interfaces.md gives `herald campaign stats`, in its order: scripts compare
 * that shape. Later statistics (bounced, unsubscribes) are in the admin API and `stats-daily`.
 */
function interfaceStats(stats: Awaited<ReturnType<typeof campaignStats>>) {
  const { sent, rejected, optout, error, pending, cancelled, queued, processed, delivered, opens, uniqueOpens, clicks, uniqueClicks } =
    stats;
  return { sent, rejected, optout, error, pending, cancelled, queued, processed, delivered, opens, uniqueOpens, clicks, uniqueClicks };
}
