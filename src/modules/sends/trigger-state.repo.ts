import { type RawBuilder, sql } from 'kysely';
import type { CampaignMode, CampaignSchedule, Channel } from '../../contract/constants.js';
import { type Bind, StatementShapes } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import type { Campaign } from '../campaigns/campaign.js';
import { contactIdOfLookupSql, type LeadLookup, lookupEntry } from '../contacts/lead-lookup.js';
import { COUNTED_SENDS, RECEIVED } from './sends.repo.js';

/** What the trigger rules read of the campaign. */
export type TriggerCampaign = Pick<
  Campaign,
  'id' | 'accountId' | 'channel' | 'schedule' | 'mode' | 'delaySeconds' | 'reentry' | 'cooldownDays' | 'active'
>;

/** What the trigger rules read of the contact, and what its write's guard compares against. */
export interface TriggerContact {
  id: string;
  optedOut: boolean;
  /** contacts.version and updated_at as read: the guard of the write (trigger-write.repo.ts). */
  version: number;
  updatedAt: number;
  /** The primary (first stored) address of each channel, or null. */
  email: string | null;
  phone: string | null;
  /** When the contact last received the campaign (lastReceipt's rule), or undefined. */
  lastReceiptAt: number | undefined;
  /** The contact's pending send of the campaign (at most one: sends_one_pending), or undefined. */
  pendingSendId: string | undefined;
}

/** The account's monthly allowance as the rules read it. */
export interface TriggerAllowance {
  allowance: number;
  /** Sends counted against it this UTC calendar month (COUNTED, test sends aside). */
  counted: number;
  /** accounts.allowance_version as read (migration 0018): the guard of a counted write. */
  version: number;
}

/** Everything a trigger decides on, read from one snapshot. */
export interface TriggerState {
  /** Undefined: no live campaign of the account has that id. */
  campaign: TriggerCampaign | undefined;
  /** Undefined: the lead names no contact of the account. */
  contact: TriggerContact | undefined;
  /** Null: the account has no allowance. */
  allowance: TriggerAllowance | null;
}

/** Which contact the trigger is for: a `lead` string to look up, or the id of a contact just written. */
export type TriggerLead = { lookup: LeadLookup | undefined } | { contactId: string };

/** The columns of triggerStateSql. */
export interface TriggerStateRow {
  campaign_id: string | null;
  channel: Channel | null;
  schedule: CampaignSchedule | null;
  mode: CampaignMode | null;
  delay_seconds: number | null;
  reentry: number | null;
  cooldown_days: number | null;
  active: number | null;
  contact_id: string | null;
  opted_out: number | null;
  version: number | null;
  updated_at: number | null;
  email: string | null;
  phone: string | null;
  last_receipt: number | null;
  pending_id: string | null;
  allowance: number | null;
  allowance_version: number | null;
  counted: number | null;
}

/**
 * Reads a trigger's whole state in ONE statement (issue 12: one round trip before the write),
 * on both engines: the campaign (deleted ones are not found), the contact the lead names with
 * its opt-out flag, version, primary addresses, last receipt of the campaign and pending send,
 * and the account's allowance with this month's count (counted only when there is one).
 */
export async function readTriggerState(
  q: Tx,
  accountId: string,
  campaignId: string,
  lead: TriggerLead,
  now: number,
): Promise<TriggerState> {
  // The text depends only on how the contact is named (db/constant-statements.ts): compiled once per kind.
  const [kind, contact] =
    'contactId' in lead ? ['contactId', lead.contactId] : lead.lookup === undefined ? ['none', undefined] : lookupEntry(lead.lookup);
  const values = { ...triggerStateValues(accountId, campaignId, now), contact };
  const { rows } = await READS.run(q, kind, values, (bind) => {
    const contactId: RawBuilder<string | null> =
      kind === 'contactId'
        ? sql`${bind('contact')}`
        : contactIdOfLookupSql(bind('accountId') as string, kind === 'none' ? undefined : ({ [kind]: bind('contact') } as LeadLookup));
    return triggerStateSqlOf(bind, contactId);
  });
  return triggerStateOf(accountId, rows[0]);
}

/** readTriggerState's texts, one per kind of lead. */
const READS = new StatementShapes();

/** What triggerStateSqlOf binds, by name (db/constant-statements.ts, Bind). */
export function triggerStateValues(accountId: string, campaignId: string, now: number) {
  const date = new Date(now);
  return { accountId, campaignId, monthStart: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) };
}

/**
 * The select of readTriggerState, one row (none when the account does not exist), for the
 * contact whose id `contactId` gives (a scalar expression, null when none), with its values
 * taken through `bind` (accountId, campaignId, monthStart: triggerStateValues): one text
 * whatever the values, so a caller can compile it once, or run it as a part of its own
 * statement (trigger-lead-read.ts).
 *
 * The campaign and the contact are found by their primary key, each in a subquery of its own
 * (LIMIT 1 on a key: no row is cut, but PostgreSQL then plans the subquery alone instead of
 * merging it into the join), and checked against the account after. Joined directly, `account_id
 * = a.id and id = X` could also be served by an index that starts with account_id (the contacts'
 * list index): on a young table, with no statistics yet, a prepared statement's generic plan took
 * that one and scanned every contact of the account on each trigger (measured: the server's CPU
 * per Delay restart 545 µs instead of about 270).
 */
export function triggerStateSqlOf(bind: Bind, contactId: RawBuilder<string | null>) {
  const accountId = bind('accountId');
  const sendsOfPair = sql`account_id = ${accountId} and campaign_id = c.id and contact_id = k.id`;
  return sql<TriggerStateRow>`
    select c.id as campaign_id, c.channel, c.schedule, c.mode, c.delay_seconds, c.reentry, c.cooldown_days, c.active,
           k.id as contact_id, k.opted_out, k.version, k.updated_at,
           (select email from contact_emails where contact_id = k.id order by position limit 1) as email,
           (select phone from contact_phones where contact_id = k.id order by position limit 1) as phone,
           (select max(coalesce(sent_at, created_at)) from sends
             where ${sendsOfPair} and status in (${sql.join(RECEIVED)}) and test = 0) as last_receipt,
           (select id from sends where ${sendsOfPair} and status = 'pending' limit 1) as pending_id,
           a.allowance, a.allowance_version,
           case when a.allowance is null then null else
             (select count(*) from sends
               where account_id = ${accountId} and created_at >= ${bind('monthStart')} and ${COUNTED_SENDS})
           end as counted
      from accounts a
      left join (select id, account_id, channel, schedule, mode, delay_seconds, reentry, cooldown_days, active from campaigns
                  where id = ${bind('campaignId')} and deleted_at is null limit 1) c on c.account_id = a.id
      left join (select id, account_id, opted_out, version, updated_at from contacts where id = ${contactId} limit 1) k on k.account_id = a.id
     where a.id = ${accountId}`;
}

/** The row of triggerStateSql as what the rules read (undefined: the account does not exist). */
export function triggerStateOf(accountId: string, row: TriggerStateRow | undefined): TriggerState {
  if (!row) return { campaign: undefined, contact: undefined, allowance: null };
  return {
    campaign:
      row.campaign_id === null
        ? undefined
        : {
            id: row.campaign_id,
            accountId,
            channel: row.channel!,
            schedule: row.schedule!,
            mode: row.mode!,
            delaySeconds: Number(row.delay_seconds),
            reentry: Number(row.reentry) === 1,
            cooldownDays: Number(row.cooldown_days),
            active: Number(row.active) === 1,
          },
    contact:
      row.contact_id === null
        ? undefined
        : {
            id: row.contact_id,
            optedOut: Number(row.opted_out) === 1,
            version: Number(row.version),
            updatedAt: Number(row.updated_at),
            email: row.email,
            phone: row.phone,
            lastReceiptAt: row.last_receipt === null ? undefined : Number(row.last_receipt),
            pendingSendId: row.pending_id ?? undefined,
          },
    allowance:
      row.allowance === null
        ? null
        : { allowance: Number(row.allowance), counted: Number(row.counted), version: Number(row.allowance_version) },
  };
}
