import { randomBytes } from 'node:crypto';
import type { Config } from '../../src/config.js';
import type { SegmentInput } from '../../src/contract/admin/segments.js';
import type { Db } from '../../src/db/connect.js';
import type { SendStatus } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { createAccount, type Plan } from '../../src/modules/accounts/accounts.service.js';
import type { CampaignInput } from '../../src/modules/campaigns/campaigns.service.js';
import { createCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import type { LeadInput } from '../../src/modules/contacts/contacts.schemas.js';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { createField, createKpi, type FieldType } from '../../src/modules/definitions/definitions.service.js';
import type { EventInput } from '../../src/modules/events/events.schemas.js';
import { recordEvent } from '../../src/modules/events/events.service.js';
import { createKey } from '../../src/modules/keys/keys.service.js';
import { SCOPES } from '../../src/modules/keys/scopes.js';
import { createSegment } from '../../src/modules/segments/segments.service.js';
import { createUser, type Role } from '../../src/modules/users/users.service.js';

/**
 * Factories for every resource, written through the services (as the API or the CLI would),
 * with random names, so tests never collide on a shared database: start each test with a fresh
 * account (`makeTenant`, `makeAccount`, `makeUser`). A signed-in panel session is
 * `signedIn()` of test/admin/helpers.ts (it signs in over HTTP, as the panel does).
 *
 * Only `insertSend` and `insertEngagement` write rows directly: they build states (a send in any
 * status, at any time, counted or not; an engagement without a real open) that the services
 * reach only through the dispatcher and real mail clients, and statistics must count exactly
 * what the tables hold.
 */

/** Random text for names and addresses, so tests never collide on a shared database. */
export const uniq = (prefix = 't') => `${prefix}${randomBytes(5).toString('hex')}`;
export const randomEmail = () => `${uniq('user')}@example.com`;
/** A valid, unique French mobile number in E.164. */
export const randomPhone = () => `+336${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;

/** The password of every user `makeUser` creates. */
export const PASSWORD = 'correct horse battery';

// --- accounts, keys, users -------------------------------------------------------------------

export async function makeAccount(db: Db, options: { plan?: Plan; allowance?: number | null } = {}) {
  return createAccount(db, { name: uniq('Account '), ...options });
}

export async function makeKey(
  db: Db,
  config: Config,
  accountId: string,
  options: { scopes?: string[]; active?: boolean; expiresAt?: number | null; name?: string } = {},
) {
  return createKey(db, config, accountId, {
    name: options.name ?? uniq('key '),
    scopes: options.scopes ?? [...SCOPES],
    active: options.active,
    expiresAt: options.expiresAt,
  });
}

/** A fresh account with an all-scopes key: the usual start of a test. */
export async function makeTenant(db: Db, config: Config, options: { plan?: Plan; allowance?: number | null; scopes?: string[] } = {}) {
  const account = await makeAccount(db, { plan: options.plan, allowance: options.allowance });
  const key = await makeKey(db, config, account.id, { scopes: options.scopes });
  return { accountId: account.id, keyId: key.id, key: key.key };
}

/** A panel user (password PASSWORD) of a fresh account, or of `accountId`. */
export async function makeUser(db: Db, options: { role?: Role; plan?: Plan; accountId?: string; password?: string } = {}) {
  const accountId = options.accountId ?? (await makeAccount(db, { plan: options.plan })).id;
  const email = randomEmail();
  const { id } = await createUser(db, accountId, { email, password: options.password ?? PASSWORD, role: options.role ?? 'admin' });
  return { accountId, userId: id, email };
}

// --- definitions, contacts, events, segments -------------------------------------------------

export const makeField = (db: Db, accountId: string, name: string, type: FieldType) => createField(db, accountId, { name, type });
export const makeKpi = (db: Db, accountId: string, id: string, name = id) => createKpi(db, accountId, { id, name });

/** A contact written as POST /api/leads writes it: a random email and a name unless given. */
export async function makeContact(db: Db, accountId: string, input: Partial<LeadInput> = {}) {
  const email = input.email ?? (input.phone === undefined ? randomEmail() : undefined);
  const written = await writeContact(db, accountId, {
    name: 'Test Contact',
    ...(email === undefined ? {} : { email }),
    ...input,
  } as LeadInput);
  return { id: written.id, email };
}

export const makeEvent = (db: Db, accountId: string, input: EventInput, now?: number) => recordEvent(db, accountId, input, now);

export const makeSegment = (db: Db, accountId: string, input: Partial<SegmentInput> = {}) =>
  createSegment(db, accountId, { name: uniq('Segment '), criteria: {}, ...input } as SegmentInput);

// --- campaigns (with their webhooks) ---------------------------------------------------------

/** A complete email campaign: activating it needs nothing more. */
export const emailCampaign = (extra: Partial<CampaignInput> = {}): CampaignInput => ({
  name: uniq('Welcome '),
  channel: 'email',
  from: 'Herald <news@example.com>',
  subject: 'Hello {{ contact.name }}',
  html: '<p>Hi {{ contact.name }}</p>',
  ...extra,
});

/** A complete WhatsApp campaign. */
export const whatsappCampaign = (extra: Partial<CampaignInput> = {}): CampaignInput => ({
  name: uniq('Reminder '),
  channel: 'whatsapp',
  whatsappTemplate: 'appointment_reminder',
  language: 'en_US',
  whatsappParams: ['{{ contact.name }}'],
  ...extra,
});

/** An active email campaign with a small personalised template; override any setting (`webhooks` too). */
export async function makeEmailCampaign(
  t: { db: Db; config: Pick<Config, 'secret' | 'webhookAllowPrivate'> },
  accountId: string,
  overrides: Partial<CampaignInput> = {},
) {
  return createCampaign(t.db, t.config, accountId, {
    name: 'Welcome',
    channel: 'email',
    from: 'Acme <news@acme.test>',
    subject: 'Hello {{ contact.name }}',
    html: '<p>Hi {{ contact.name }}</p>',
    text: 'Hi {{ contact.name }}',
    active: true,
    ...overrides,
  });
}

/** An active WhatsApp campaign; override any setting. */
export async function makeWhatsappCampaign(
  t: { db: Db; config: Pick<Config, 'secret' | 'webhookAllowPrivate'> },
  accountId: string,
  overrides: Partial<CampaignInput> = {},
) {
  return createCampaign(t.db, t.config, accountId, whatsappCampaign({ active: true, ...overrides }));
}

// --- sends and engagements (direct rows, see the top of this file) ---------------------------

export interface SendRowOptions {
  /** A new contact of the account unless given. */
  contactId?: string;
  status?: SendStatus;
  channel?: 'email' | 'whatsapp';
  /** created_at, updated_at and due_at (default now). */
  at?: number;
  /** wake_at, when not `at` (a waiting send a restart moved later wakes before it is due). */
  wakeAt?: number;
  /** updated_at, when not `at`. */
  updatedAt?: number;
  attempts?: number;
  leaseUntil?: number | null;
  to?: string | null;
  /** processed_at = at when true, or the time given. */
  processed?: boolean | number;
  delivered?: boolean | number;
  /** sent_at: `at` for a `sent` send unless given. */
  sentAt?: number | null;
  /** A test send from the panel (migration 0004). */
  test?: 0 | 1;
}

/**
 * A sends row in exactly the state given, written directly: the services reach these states
 * only through the dispatcher, and statistics, allowances and activity must count what the
 * table holds.
 */
export async function insertSend(
  db: Db,
  accountId: string,
  campaignId: string,
  options: SendRowOptions = {},
): Promise<{ id: string; contactId: string }> {
  const contactId = options.contactId ?? (await makeContact(db, accountId)).id;
  const id = newId('snd');
  const at = options.at ?? Date.now();
  const status = options.status ?? 'queued';
  const time = (flag: boolean | number | undefined) => (flag === undefined || flag === false ? null : flag === true ? at : flag);
  await db.kysely
    .insertInto('sends')
    .values({
      id,
      account_id: accountId,
      campaign_id: campaignId,
      contact_id: contactId,
      status,
      channel: options.channel ?? 'email',
      due_at: at,
      wake_at: options.wakeAt ?? at,
      lease_until: options.leaseUntil ?? null,
      attempts: options.attempts ?? 0,
      reason: null,
      to_address: options.to ?? null,
      provider_message_id: null,
      processed_at: time(options.processed),
      delivered_at: time(options.delivered),
      sent_at: options.sentAt !== undefined ? options.sentAt : status === 'sent' ? at : null,
      created_at: at,
      updated_at: options.updatedAt ?? at,
      ...(options.test === undefined ? {} : { test: options.test }),
    })
    .execute();
  return { id, contactId };
}

/** An open or a click of a send, written directly (a real one needs a mail client). */
export async function insertEngagement(
  db: Db,
  accountId: string,
  campaignId: string,
  send: { id: string; contactId: string },
  kind: 'open' | 'click',
  at = Date.now(),
): Promise<void> {
  await db.kysely
    .insertInto('engagements')
    .values({
      id: uniq('eng_'),
      account_id: accountId,
      campaign_id: campaignId,
      send_id: send.id,
      contact_id: send.contactId,
      kind,
      url: kind === 'click' ? 'https://example.com/' : null,
      created_at: at,
    })
    .execute();
}
