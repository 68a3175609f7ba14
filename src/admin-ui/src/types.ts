/** Shapes of the admin API (docs/admin-api.md). Timestamps are ISO 8601 strings. */

import { FIELD_TYPES as CONTRACT_FIELD_TYPES, SCOPES as SCOPE_IDS, type Scope } from '../../contract/constants';

/* The shapes of the account, users, keys, definitions and session come from the admin API's contract (type imports only). */
export type { Plan, Account, AccountPatch } from '../../contract/admin/account';
export type { Role, User, UserInput } from '../../contract/admin/users';
export type { ApiKey, KeyCreatedBody, KeyInput, KeyPatchInput, KeyState, Scope } from '../../contract/admin/keys';
export type { CustomField, CustomFieldInput, FieldType, Kpi, KpiInput } from '../../contract/admin/definitions';
export type { Session, LoginInput } from '../../contract/admin/session';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** How the panel names each scope: a new scope in the contract fails type-checking here until it is labelled. */
const SCOPE_LABELS: Record<Scope, { label: string; hint: string }> = {
  'leads:write': { label: 'Write contacts', hint: 'POST /api/leads, and a lead object in trigger' },
  'events:write': { label: 'Write events', hint: 'POST /api/events' },
  'campaigns:trigger': { label: 'Trigger campaigns', hint: 'Trigger and cancel' },
  'leads:read': { label: 'Read contacts', hint: 'Reading contact data' },
};

export const SCOPES = SCOPE_IDS.map((id) => ({ id, ...SCOPE_LABELS[id] }));

export const FIELD_TYPES = CONTRACT_FIELD_TYPES;

export type Channel = 'email' | 'whatsapp';

export interface Campaign {
  id: string;
  name: string;
  channel: Channel;
  schedule: 'api' | 'manual';
  mode: 'immediate' | 'delay';
  delaySeconds: number;
  reentry: boolean;
  cooldownDays: number;
  active: boolean;
  email: { from: string | null; subject: string | null; html: string | null; text: string | null };
  whatsapp: { template: string | null; language: string | null; params: string[] };
  webhooks: string[];
  createdAt: string;
  updatedAt: string;
}

/** The members POST/PATCH /campaigns accept. */
export interface CampaignInput {
  name: string;
  channel: Channel;
  schedule: 'api' | 'manual';
  mode: 'immediate' | 'delay';
  delaySeconds: number | string;
  reentry: boolean;
  cooldownDays: number | string;
  from: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  whatsappTemplate: string | null;
  language: string | null;
  whatsappParams: string[];
  webhooks: string[];
  active?: boolean;
}

export interface StatsTotals {
  sent: number;
  rejected: number;
  optout: number;
  error: number;
  pending: number;
  cancelled: number;
  queued: number;
  processed: number;
  delivered: number;
  opens: number;
  uniqueOpens: number;
  clicks: number;
  uniqueClicks: number;
}

export interface StatsDay {
  date: string;
  sent: number;
  error: number;
  processed: number;
  delivered: number;
  opens: number;
  clicks: number;
}

export interface CampaignStats {
  totals: StatsTotals;
  days: StatsDay[];
}

export type EmailPreview = { subject: string; html: string | null; text: string | null };
export type WhatsappPreview = { template: string; language: string; params: string[] };

export interface WebhookAttempt {
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
}

export interface WebhookDelivery {
  id: string;
  messageId: string;
  url: string;
  status: string;
  attempts: WebhookAttempt[];
  sendId?: string;
  createdAt?: string;
  nextAttemptAt?: string | null;
  lastError?: string | null;
  /** The exact JSON that was signed and sent. */
  payload?: unknown;
}

export interface ContactSummary {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  tags: string[];
  archived: boolean;
  optedOut: boolean;
  createdAt: string;
}

export interface Note {
  text: string;
  createdBy: string;
  createdAt: string;
}

export interface ContactProfile {
  id: string;
  name: string;
  emails: string[];
  phones: string[];
  tags: string[];
  fields: Record<string, unknown>;
  kpis: Record<string, number>;
  metadata: Record<string, unknown>;
  notes: Note[];
  trackers: string[];
  archived: boolean;
  optedOut: boolean;
  createdAt: string;
  updatedAt: string;
}

export type ActivityItem =
  | { kind: 'event'; at: string; id: string; type: string; value: string | null; metadata: Record<string, unknown>; url: string | null }
  | { kind: 'note'; at: string; text: string; createdBy: string }
  | { kind: 'send'; at: string; sendId: string; campaignId: string; status: string; test?: boolean }
  | { kind: 'open' | 'click'; at: string; sendId?: string; campaignId?: string; url?: string | null }
  | { kind: string; at: string; [member: string]: unknown };

export interface Criteria {
  event?: { type: string; withinDays: number; metadata?: { key: string; value: string } };
  tags?: string[];
  fields?: { name: string; value: string }[];
}

export interface Segment {
  id: string;
  name: string;
  criteria: Criteria;
  createdAt: string;
}

export interface OutboxItem {
  id: string;
  sendId: string | null;
  campaignId: string | null;
  channel: Channel;
  to: string;
  from: string | null;
  subject: string | null;
  createdAt: string;
}

export interface OutboxMessage extends OutboxItem {
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  payload: unknown;
}
