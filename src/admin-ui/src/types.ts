/** Shapes of the admin API (docs/admin-api.md). Timestamps are ISO 8601 strings. */

import { FIELD_TYPES as CONTRACT_FIELD_TYPES, SCOPES as SCOPE_IDS, type Scope } from '../../contract/constants';

/* The shapes of the account, users, keys, definitions and session come from the admin API's contract (type imports only). */
export type { Account, AccountPatch, Plan } from '../../contract/admin/account';
export type { CustomField, CustomFieldInput, FieldType, Kpi, KpiInput, RenameInput } from '../../contract/admin/definitions';
export type { ApiKey, KeyCreatedBody, KeyInput, KeyPatchInput, KeyState, Scope } from '../../contract/admin/keys';
export type { LoginInput, Session } from '../../contract/admin/session';
export type { OwnPasswordInput, Role, User, UserInput, UserPasswordInput, UserRoleInput } from '../../contract/admin/users';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** How the panel names each scope: a new scope in the contract fails type-checking here until it is labelled. */
const SCOPE_LABELS: Record<Scope, { label: string; hint: string }> = {
  'leads:write': { label: 'Write contacts', hint: 'POST /api/leads, and a lead object in trigger' },
  'events:write': { label: 'Write events', hint: 'POST /api/events' },
  'campaigns:trigger': { label: 'Trigger campaigns', hint: 'Trigger and cancel' },
  'leads:read': { label: 'Read contacts', hint: 'GET /api/leads/{id} and GET /api/leads?email=…|phone=…' },
};

export const SCOPES = SCOPE_IDS.map((id) => ({ id, ...SCOPE_LABELS[id] }));

export const FIELD_TYPES = CONTRACT_FIELD_TYPES;

import type { Channel } from '../../contract/constants';

export type { Channel };

import type { CampaignCreateBody } from '../../contract/admin/campaigns';

/** The campaign routes' shapes, from the admin API's contract (src/contract/admin/campaigns.ts). */
export type {
  Campaign,
  CampaignDuplicated,
  CampaignPreview,
  CampaignStats,
  EmailPreview,
  LinkClicks,
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
export type {
  ActivityItem,
  AdminContactProfile,
  ContactEditBody,
  ContactErased,
  ContactProfile,
  ContactSummary,
  Note,
} from '../../contract/admin/contacts';
export type { OutboxItem, OutboxMessage } from '../../contract/admin/outbox';
export type { Criteria, Segment, SegmentListItem } from '../../contract/admin/segments';
