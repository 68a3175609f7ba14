/**
 * The constants of Herald's contract, shared by the server and the admin panel. This file
 * imports nothing: the panel bundles it as it is, so the two sides can never drift apart.
 */

/** The channels a campaign can send on (a registry keyed by channel lists what each needs). */
export const CHANNELS = ['email', 'whatsapp'] as const;
export type Channel = (typeof CHANNELS)[number];

/** The scopes of an API key (service-spec.md, Authentication). */
export const SCOPES = ['leads:write', 'leads:read', 'events:write', 'campaigns:trigger'] as const;
export type Scope = (typeof SCOPES)[number];

/** The types a custom field can have. */
export const FIELD_TYPES = ['string', 'number', 'date', 'boolean', 'location', 'phone', 'array'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** The roles of an admin panel user. */
export const USER_ROLES = ['admin', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** How a campaign starts and when it sends. */
export const CAMPAIGN_SCHEDULES = ['api', 'manual'] as const;
export type CampaignSchedule = (typeof CAMPAIGN_SCHEDULES)[number];
export const CAMPAIGN_MODES = ['immediate', 'delay'] as const;
export type CampaignMode = (typeof CAMPAIGN_MODES)[number];

/** Webhook addresses a campaign may have. */
export const MAX_WEBHOOKS = 3;

/** The statuses a send goes through (service-spec.md, Sends). */
export const SEND_STATUSES = ['pending', 'queued', 'sending', 'sent', 'error', 'rejected', 'optout', 'cancelled'] as const;
export type SendStatus = (typeof SEND_STATUSES)[number];

/** A segment's event criteria look back at most this many days (decisions.md: events are kept at least that long). */
export const MAX_WITHIN_DAYS = 90;
/** Groups of a segment's criteria (any may hold). */
export const MAX_SEGMENT_GROUPS = 10;

/**
 * Free-form values (metadata, custom field values) nest at most this many levels of objects
 * and arrays (decisions.md, Limits).
 */
export const MAX_JSON_DEPTH = 32;

/** Where a webhook delivery stands (the campaign's delivery log). */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivering', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** The plans of an account (decisions.md, Plans). */
export const PLANS = ['free', 'pro'] as const;
export type Plan = (typeof PLANS)[number];

/** The state of an API key as the panel lists it, in the order the API checks (inactive, then expired). */
export const KEY_STATES = ['active', 'inactive', 'expired'] as const;
export type KeyState = (typeof KEY_STATES)[number];

/** The longest name of a custom field or KPI, and id of a KPI (characters, after trimming). */
export const MAX_DEFINITION_NAME = 255;
