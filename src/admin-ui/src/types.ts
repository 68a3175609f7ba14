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

// Contacts, activity, segments and the outbox: the server's contract (type imports only, erased from the bundle).
export type { ActivityItem, ContactProfile, ContactSummary, Note } from '../../contract/admin/contacts';
export type { Criteria, Segment } from '../../contract/admin/segments';
export type { OutboxItem, OutboxMessage } from '../../contract/admin/outbox';
