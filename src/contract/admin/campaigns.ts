import { type Static, Type } from 'typebox';
import { Choice, IdParams, NoContent, Nullable, QueryNumber, Timestamp } from '../common.js';
import { CAMPAIGN_MODES, CAMPAIGN_SCHEDULES, CHANNELS, MAX_JSON_DEPTH, WEBHOOK_DELIVERY_STATUSES } from '../constants.js';

/**
 * The campaign routes of the admin API (docs/admin-api.md, Campaigns): request and response
 * schemas, and their types for the server and the panel (src/admin-ui/src/types.ts).
 *
 * Ranges, templates, addresses and webhook URLs are the campaign settings' own checks
 * (modules/campaigns/campaign-settings.ts), shared with the CLI; the schemas give the JSON types
 * and the choices. A wrong choice answers the message those checks give (and always gave).
 */

export { IdParams as CampaignParams };

const Text = Nullable(Type.String());

const members = {
  name: Type.String(),
  channel: Choice(CHANNELS, 'channel must be email or whatsapp'),
  schedule: Choice(CAMPAIGN_SCHEDULES, 'schedule must be api or manual'),
  mode: Choice(CAMPAIGN_MODES, 'mode must be immediate or delay'),
  delaySeconds: Type.Integer(),
  reentry: Type.Boolean(),
  cooldownDays: Type.Integer(),
  active: Type.Boolean(),
  from: Text,
  subject: Text,
  html: Text,
  text: Text,
  whatsappTemplate: Text,
  language: Text,
  whatsappParams: Type.Array(Type.String()),
  webhooks: Type.Array(Type.String()),
};
const optional = Object.fromEntries(Object.entries(members).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof members]: ReturnType<typeof Type.Optional<(typeof members)[K]>>;
};

/** `POST /campaigns`: name and channel, every other setting optional (defaults of interfaces.md). */
export const CampaignCreateBody = Type.Object(
  { ...optional, name: members.name, channel: members.channel },
  { additionalProperties: false, title: 'CampaignCreateBody' },
);
export type CampaignCreateBody = Static<typeof CampaignCreateBody>;

/** `PATCH /campaigns/:id`: the members given change; null or '' clears an optional text. */
export const CampaignPatchBody = Type.Object(optional, { additionalProperties: false, title: 'CampaignPatchBody' });
export type CampaignPatchBody = Static<typeof CampaignPatchBody>;

export const CampaignCreated = Type.Object({ id: Type.String(), webhookSecret: Type.String() }, { title: 'CampaignCreated' });
export type CampaignCreated = Static<typeof CampaignCreated>;

/** The Campaign of docs/admin-api.md (the CLI's JSON without the account id: the session names it). */
export const Campaign = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    channel: Choice(CHANNELS),
    schedule: Choice(CAMPAIGN_SCHEDULES),
    mode: Choice(CAMPAIGN_MODES),
    delaySeconds: Type.Integer(),
    reentry: Type.Boolean(),
    cooldownDays: Type.Integer(),
    active: Type.Boolean(),
    email: Type.Object({ from: Text, subject: Text, html: Text, text: Text }),
    /** `params`: one Liquid string per body parameter of the approved template, in order. */
    whatsapp: Type.Object({ template: Text, language: Text, params: Type.Array(Type.String()) }),
    webhooks: Type.Array(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Campaign' },
);
export type Campaign = Static<typeof Campaign>;

/** `POST /campaigns/:id/duplicate`: the copy, and its own new webhook signing secret (shown once, as on create). */
export const CampaignDuplicated = Type.Object({ ...Campaign.properties, webhookSecret: Type.String() }, { title: 'CampaignDuplicated' });
export type CampaignDuplicated = Static<typeof CampaignDuplicated>;

/** `DELETE /campaigns/:id`: 204, no body. */
export { NoContent as CampaignDeleted };

export const CampaignList = Type.Object({ items: Type.Array(Campaign) });
export type CampaignList = Static<typeof CampaignList>;

/** `?days=` 1 to 366, 30 by default (read by wholeQuery, which names the range). */
export const CampaignStatsQuery = Type.Object({ days: Type.Optional(QueryNumber) }, { additionalProperties: false });

const count = Type.Integer({ minimum: 0 });
export const StatsTotals = Type.Object(
  {
    sent: count,
    rejected: count,
    optout: count,
    error: count,
    pending: count,
    cancelled: count,
    /** Waiting to go out or being handed to the channel right now. */
    queued: count,
    processed: count,
    delivered: count,
    opens: count,
    uniqueOpens: count,
    clicks: count,
    uniqueClicks: count,
    /** Sends whose address the recipient's server refused for good (also in `error`). */
    bounced: count,
    /** Opt-outs through the campaign's unsubscribe link. */
    unsubscribes: count,
  },
  { title: 'StatsTotals' },
);
export type StatsTotals = Static<typeof StatsTotals>;

/** One UTC day, oldest first, quiet days included. */
export const StatsDay = Type.Object(
  {
    /** yyyy-mm-dd, UTC. */
    date: Type.String(),
    sent: count,
    error: count,
    processed: count,
    delivered: count,
    opens: count,
    uniqueOpens: count,
    clicks: count,
    uniqueClicks: count,
    bounced: count,
    unsubscribes: count,
  },
  { title: 'StatsDay' },
);
export type StatsDay = Static<typeof StatsDay>;

/** One link of the campaign's emails, the most clicked first. */
export const LinkClicks = Type.Object({ url: Type.String(), clicks: count, uniqueClicks: count }, { title: 'LinkClicks' });
export type LinkClicks = Static<typeof LinkClicks>;

export const CampaignStats = Type.Object(
  { totals: StatsTotals, days: Type.Array(StatsDay), links: Type.Array(LinkClicks, { maxItems: 100 }) },
  { title: 'CampaignStats' },
);
export type CampaignStats = Static<typeof CampaignStats>;

/** Sample trigger data (`{{ trigger.* }}`) for a preview or a test send: as a trigger's `data` (16 KiB, 32 levels). */
const SampleTriggerData = Type.Record(Type.String(), Type.Unknown(), {
  maxDepth: MAX_JSON_DEPTH,
  description: "Sample trigger data, rendered as {{ trigger.* }} (as a trigger call's `data`); absent: trigger.* renders empty.",
});

/** `POST /campaigns/:id/preview`: the contact, the form's unsaved edits, and sample trigger data. */
export const PreviewBody = Type.Object(
  {
    contactId: Type.String({ minLength: 1, maxLength: 255 }),
    campaign: Type.Optional(CampaignPatchBody),
    data: Type.Optional(SampleTriggerData),
  },
  { additionalProperties: false },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const EmailPreview = Type.Object(
  { subject: Type.String(), html: Nullable(Type.String()), text: Type.String() },
  { title: 'EmailPreview' },
);
export type EmailPreview = Static<typeof EmailPreview>;
export const WhatsappPreview = Type.Object(
  { template: Type.String(), language: Type.String(), params: Type.Array(Type.String()) },
  { title: 'WhatsappPreview' },
);
export type WhatsappPreview = Static<typeof WhatsappPreview>;
export const CampaignPreview = Type.Union([EmailPreview, WhatsappPreview]);
export type CampaignPreview = Static<typeof CampaignPreview>;

/** `POST /campaigns/:id/test-send`. */
export const TestSendBody = Type.Object(
  { contactId: Type.String({ minLength: 1, maxLength: 255 }), data: Type.Optional(SampleTriggerData) },
  { additionalProperties: false },
);
export type TestSendBody = Static<typeof TestSendBody>;
export const TestSendQueued = Type.Object({ sendId: Type.String() });
export type TestSendQueued = Static<typeof TestSendQueued>;

/** `?limit=` 1 to 1000, 100 by default. */
export const WebhookDeliveriesQuery = Type.Object({ limit: Type.Optional(QueryNumber) }, { additionalProperties: false });

export const WebhookAttempt = Type.Object(
  {
    at: Timestamp,
    /** The receiver's HTTP status; null when there was no answer (see error). */
    statusCode: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    durationMs: Type.Integer(),
  },
  { title: 'WebhookAttempt' },
);
export type WebhookAttempt = Static<typeof WebhookAttempt>;

export const WebhookDelivery = Type.Object(
  {
    id: Type.String(),
    /** The `webhook-id` header sent on every attempt. */
    messageId: Type.String(),
    sendId: Type.String(),
    /** The webhook's place in the campaign's list (0-based). */
    position: Type.Integer(),
    url: Type.String(),
    status: Choice(WEBHOOK_DELIVERY_STATUSES),
    /** The exact JSON that was signed and sent. */
    payload: Type.Unknown(),
    /** When the next attempt is due; null while one runs and once delivered or failed. */
    nextAttemptAt: Nullable(Timestamp),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    /** Oldest first. */
    attempts: Type.Array(WebhookAttempt),
  },
  { title: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryList = Type.Object({ items: Type.Array(WebhookDelivery) });
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;
