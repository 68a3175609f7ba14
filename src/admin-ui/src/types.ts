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
import type { CampaignCreateBody } from '../../contract/admin/campaigns';

/** The campaign routes' shapes, from the admin API's contract (src/contract/admin/campaigns.ts). */
export type {
  Campaign,
  CampaignPreview,
  CampaignStats,
  EmailPreview,
  StatsDay,
  StatsTotals,
  WebhookAttempt,
  WebhookDelivery,
  WhatsappPreview,
} from '../../contract/admin/campaigns';

/**
 * What the campaign form sends to POST/PATCH /campaigns: every setting. A delay or cooldown
 * that is not a whole number goes as typed, so the API's answer names the field at fault.
 */
export type CampaignInput = Required<Omit<CampaignCreateBody, 'delaySeconds' | 'cooldownDays' | 'active'>> & {
  delaySeconds: number | string;
  cooldownDays: number | string;
  active?: boolean;
};

// Contacts, activity, segments and the outbox: the server's contract (type imports only, erased from the bundle).
export type { ActivityItem, ContactProfile, ContactSummary, Note } from '../../contract/admin/contacts';
export type { Criteria, Segment } from '../../contract/admin/segments';
export type { OutboxItem, OutboxMessage } from '../../contract/admin/outbox';
