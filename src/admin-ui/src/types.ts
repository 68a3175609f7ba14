/** Shapes of the admin API (docs/admin-api.md). Timestamps are ISO 8601 strings. */

export type Role = 'admin' | 'member';
export type Plan = 'free' | 'pro';

export interface Session {
  user: { id: string; email: string; role: Role };
  account: { id: string; name: string; plan: Plan };
  csrfToken: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  allowance: number | null;
  usedThisMonth: number;
  whatsapp: { configured: boolean; phoneNumberId: string | null };
}

export interface User {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
}

export const SCOPES = [
  { id: 'leads:write', label: 'Write contacts', hint: 'POST /api/leads, and a lead object in trigger' },
  { id: 'events:write', label: 'Write events', hint: 'POST /api/events' },
  { id: 'campaigns:trigger', label: 'Trigger campaigns', hint: 'Trigger and cancel' },
  { id: 'leads:read', label: 'Read contacts', hint: 'Reading contact data' },
] as const;

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  active: boolean;
  expiresAt: string | null;
  state: 'active' | 'inactive' | 'expired';
  createdAt: string;
}

export const FIELD_TYPES = ['string', 'number', 'date', 'boolean', 'location', 'phone', 'array'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface CustomField {
  id: string;
  name: string;
  type: FieldType;
}

export interface Kpi {
  id: string;
  name: string;
}

import type { Channel } from '../../contract/constants';

export type { Channel };

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
