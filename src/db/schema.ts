import type { Generated } from 'kysely';

/**
 * Row types of every table, shared by both engines. Conventions that keep SQLite and
 * PostgreSQL identical: times are epoch milliseconds (bigint), booleans are 0/1 integers,
 * JSON is stored as text, and every tenant-owned row carries account_id.
 */
export type Bool = 0 | 1;

export interface AccountsTable {
  id: string;
  name: string;
  plan: 'free' | 'pro';
  /** Monthly send allowance; null means none. */
  allowance: number | null;
  whatsapp_phone_number_id: string | null;
  /** AES-GCM encrypted with the master secret. */
  whatsapp_token: string | null;
  whatsapp_app_secret: string | null;
  /** Webhook handshake token (migration 0005), AES-GCM encrypted like the token and app secret. */
  whatsapp_verify_token: string | null;
  /** Keyed hash (HMAC) of the verify token: the handshake finds the account by it. */
  whatsapp_verify_token_hash: string | null;
  /** The unsubscribe page's language and texts as JSON (migration 0016); null: the English defaults. */
  unsubscribe_page?: string | null;
  created_at: number;
  /** Counted sends recorded under an allowance (migration 0018): the guard of a trigger's write on PostgreSQL. */
  allowance_version?: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  /** SHA-256 of the key value, hex: the look-up column. */
  key_hash: string;
  /** The key value, AES-GCM encrypted, so an administrator can copy it again. */
  key_encrypted: string;
  /** JSON list of scopes. */
  scopes: string;
  active: Bool;
  expires_at: number | null;
  created_at: number;
}

export interface UsersTable {
  id: string;
  account_id: string;
  email: string;
  password_hash: string;
  role: 'admin' | 'member';
  created_at: number;
}

export interface CustomFieldsTable {
  id: string;
  account_id: string;
  name: string;
  /** Lowercased name: API keys match it ignoring case. */
  name_key: string;
  type: 'string' | 'number' | 'date' | 'boolean' | 'location' | 'phone' | 'array';
  created_at: number;
}

export interface KpisTable {
  account_id: string;
  kpi_id: string;
  name: string;
  created_at: number;
}

export interface ContactsTable {
  id: string;
  account_id: string;
  name: string;
  archived: Bool;
  opted_out: Bool;
  /** JSON object. */
  metadata: string;
  created_at: number;
  updated_at: number;
  /** Bumped by every write whose rules read the contact (migration 0017, src/db/write-unit.ts). */
  version: number;
}

export interface ContactEmailsTable {
  account_id: string;
  email: string;
  contact_id: string;
  /** Order of arrival: the lowest is the primary address used for sending. */
  position: number;
}

export interface ContactPhonesTable {
  account_id: string;
  phone: string;
  contact_id: string;
  position: number;
}

export interface ContactTagsTable {
  account_id: string;
  contact_id: string;
  tag: string;
}

export interface ContactFieldValuesTable {
  account_id: string;
  contact_id: string;
  field_id: string;
  /** JSON of the stored value. */
  value: string;
}

export interface ContactKpisTable {
  account_id: string;
  contact_id: string;
  kpi_id: string;
  /** The total in millionths (fixed point, 6 decimal places): exact on both engines. */
  value_micros: number;
}

export interface ContactNotesTable {
  id: string;
  account_id: string;
  contact_id: string;
  text: string;
  created_by: string;
  created_at: number;
}

export interface TrackersTable {
  account_id: string;
  tracker: string;
  contact_id: string;
  linked_at: number;
}

export interface EventsTable {
  id: string;
  account_id: string;
  contact_id: string;
  type: string;
  value: string | null;
  metadata: string;
  url: string | null;
  created_at: number;
}

export interface CampaignsTable {
  id: string;
  account_id: string;
  name: string;
  channel: 'email' | 'whatsapp';
  /** `api` (API Trigger) is the only schedule the trigger operation accepts. */
  schedule: 'api' | 'manual';
  mode: 'immediate' | 'delay';
  delay_seconds: number;
  reentry: Bool;
  cooldown_days: number;
  active: Bool;
  email_from: string | null;
  email_subject: string | null;
  email_html: string | null;
  email_text: string | null;
  whatsapp_template: string | null;
  whatsapp_language: string | null;
  /** JSON list of Liquid strings, one per body parameter of the WhatsApp template. */
  whatsapp_params: string;
  /** The campaign's `whsec_` signing secret, AES-GCM encrypted with the master secret. */
  webhook_secret: string;
  created_at: number;
  updated_at: number;
}

/**
 * A campaigns row as stored. `deleted_at` (migration 0013) marks a deleted campaign: every
 * campaign read skips it. It has a default, so code that writes campaigns never names it.
 */
export interface CampaignsRow extends CampaignsTable {
  deleted_at: Generated<number | null>;
}

export interface CampaignWebhooksTable {
  campaign_id: string;
  position: number;
  account_id: string;
  url: string;
}

/**
 * A send's life (decisions.md): pending (delay) -> queued -> sending -> sent | error;
 * or rejected / optout / cancelled, which never go out.
 */
export type SendStatus = 'pending' | 'queued' | 'sending' | 'sent' | 'error' | 'rejected' | 'optout' | 'cancelled';

export interface SendsTable {
  id: string;
  account_id: string;
  campaign_id: string;
  contact_id: string;
  status: SendStatus;
  channel: 'email' | 'whatsapp';
  /** When a pending or queued send may go out (a retry moves it later). */
  due_at: number;
  /** A claimed (sending) row belongs to its worker until then; after, another worker retries it. */
  lease_until: number | null;
  /** Delivery attempts so far; also fences a worker whose lease ran out. */
  attempts: number;
  /** Why a send ended in error, or the last temporary failure. */
  reason: string | null;
  to_address: string | null;
  provider_message_id: string | null;
  processed_at: number | null;
  delivered_at: number | null;
  sent_at: number | null;
  created_at: number;
  updated_at: number;
  /** The trigger call's `data` object as JSON text (migration 0010), or null when it carried none. */
  trigger_data: string | null;
}

/**
 * A sends row as stored. `test` (migration 0004) marks a test send made from the admin panel:
 * delivered like any other, but outside the trigger rules, statistics and the allowance. It
 * has a default, so code that writes real sends (typed SendsTable) never names it.
 */
export interface SendsRow extends SendsTable {
  test: Generated<Bool>;
  /** When the recipient's server refused the address for good (migration 0011); the send is `error`. */
  bounced_at: Generated<number | null>;
  /** A test send to an address other than the contact's (migration 0016); null otherwise. */
  test_to: Generated<string | null>;
  /**
   * When the dispatcher looks at a waiting send again (migration 0024): never after `due_at`. A
   * new send's is its `due_at`; a Delay restart that moves `due_at` later leaves it, and a claim
   * that finds the send at the queue's front awake but not yet due sets it to `due_at`
   * (dispatch.repo.ts, queueFront and rearmWoken).
   * The default 0 (awake at once) is safe for a row written without it.
   */
  wake_at: Generated<number>;
}

export interface WebhookDeliveriesTable {
  id: string;
  account_id: string;
  campaign_id: string;
  send_id: string;
  position: number;
  url: string;
  /** The exact JSON body that is signed and sent on every attempt. */
  payload: string;
  status: 'pending' | 'delivering' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptsTable {
  id: string;
  account_id: string;
  delivery_id: string;
  attempted_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
}

export interface OutboxMessagesTable {
  id: string;
  account_id: string;
  send_id: string;
  campaign_id: string;
  channel: 'email' | 'whatsapp';
  to_address: string;
  from_address: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  /** JSON object of the email headers (List-Unsubscribe ...). */
  headers: string;
  /** WhatsApp: the JSON request body that would have gone to the Cloud API. */
  payload: string | null;
  created_at: number;
}

export interface EngagementsTable {
  id: string;
  account_id: string;
  campaign_id: string;
  send_id: string;
  contact_id: string;
  /** open (email pixel or WhatsApp read), click (email link), unsubscribe (the send's unsubscribe link opted the contact out). */
  kind: 'open' | 'click' | 'unsubscribe';
  url: string | null;
  created_at: number;
}

/** An address that bounced (migration 0011): sends to it end in error before they are tried. */
export interface SuppressedAddressesTable {
  account_id: string;
  channel: 'email' | 'whatsapp';
  address: string;
  /** The refusal, as the send's reason says it. */
  reason: string;
  /** The send that bounced. */
  send_id: string;
  created_at: number;
}

/** A signed-in admin panel session; the id is the SHA-256 (hex) of the cookie's token. */
export interface SessionsTable {
  id: string;
  user_id: string;
  account_id: string;
  /** Every non-GET request of the session must echo it in `x-csrf-token`. */
  csrf_token: string;
  /** Sliding: pushed 7 days ahead as the session is used. */
  expires_at: number;
  created_at: number;
}

/** Sign-in attempts counted in the current window, for one email or one client address. */
export interface LoginThrottleTable {
  /** `email:` + the email as typed, trimmed and lowercased (unknown emails are throttled too), or `ip:` + the address. */
  subject: string;
  attempts: number;
  window_start: number;
}

/** The stored answer of a public API request sent with an `Idempotency-Key` (kept 24 hours). */
export interface IdempotencyKeysTable {
  account_id: string;
  /** As the client sent it: 1 to 255 visible ASCII characters. */
  key: string;
  /** SHA-256 (hex) of the method, the route and the canonical JSON body. */
  fingerprint: string;
  /** Null only inside the transaction that claimed the key, before its effect ran. */
  status: number | null;
  /** The answer's JSON. */
  body: string | null;
  created_at: number;
}

export interface SegmentsTable {
  id: string;
  account_id: string;
  name: string;
  /** JSON of the segment's criteria, in stored form (tags normalised). */
  criteria: string;
  created_at: number;
  updated_at: number;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
  custom_fields: CustomFieldsTable;
  kpis: KpisTable;
  contacts: ContactsTable;
  contact_emails: ContactEmailsTable;
  contact_phones: ContactPhonesTable;
  contact_tags: ContactTagsTable;
  contact_field_values: ContactFieldValuesTable;
  contact_kpis: ContactKpisTable;
  contact_notes: ContactNotesTable;
  trackers: TrackersTable;
  events: EventsTable;
  campaigns: CampaignsRow;
  campaign_webhooks: CampaignWebhooksTable;
  sends: SendsRow;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  outbox_messages: OutboxMessagesTable;
  engagements: EngagementsTable;
  sessions: SessionsTable;
  login_throttle: LoginThrottleTable;
  segments: SegmentsTable;
  idempotency_keys: IdempotencyKeysTable;
  suppressed_addresses: SuppressedAddressesTable;
}
