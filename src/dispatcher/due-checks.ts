import type { Expression } from 'kysely';
import { CHANNEL_REGISTRY, recipientAddress } from '../channels/registry.js';
import type { Db } from '../db/connect.js';
import { type Compilable, jsonListIn, StatementShapes } from '../db/constant-statements.js';
import { inReadTransaction, type Tx } from '../db/transaction.js';
import type { Campaign } from '../modules/campaigns/campaign.js';
import { campaignsWithWebhooksQuery, groupCampaignRows } from '../modules/campaigns/campaigns.repo.js';
import { campaignsFrom } from '../modules/campaigns/campaigns.service.js';
import { assembleContactProfiles, type ContactProfileRows, contactProfileQueries } from '../modules/contacts/contact-profile.js';
import type { ContactProfile } from '../modules/contacts/contacts.service.js';
import { latestReceiptOf, rejectedByReentry } from '../modules/sends/recipient-rules.js';
import { receiptsQuery } from '../modules/sends/sends.repo.js';
import { suppressedAmongQuery } from '../modules/suppressions/suppressions.repo.js';
import { suppressedFrom } from '../modules/suppressions/suppressions.service.js';
import type { ClaimedSend } from './dispatch.repo.js';

/** What a due send comes to: ended without delivery, or ready to go to `to`. */
export type Verdict =
  | { end: 'error' | 'optout' | 'rejected'; reason: string | null }
  | { campaign: Campaign; contact: ContactProfile; to: string };

/**
 * The checks that run again when a send comes due (decisions.md), for a whole claimed batch
 * in one read-only transaction: a statement per table for all its sends, instead of a write
 * transaction (a savepoint in the commit queue) per send. A deactivated campaign ends a send in
 * error, an opt-out in Optout, a receipt meanwhile in Rejected, a missing or bounced address in error. A
 * test send from the admin panel skips the campaign's activation and re-entry rules (it is how
 * a draft is tried out), never the opt-out. The contact's profile is read in the same
 * snapshot: it is what the message is rendered from, and it holds the opt-out flag and the
 * addresses in order (the first is the primary one).
 */
export async function checkAtDueTime(db: Db, sends: ClaimedSend[], now: number): Promise<Map<string, Verdict>> {
  if (sends.length === 0) return new Map();
  return verdictsOf(sends, await inReadTransaction(db, (tx) => readDueData(tx, sends)), now);
}

/** What the checks and the rendering of a claimed batch read: its campaigns, contacts, receipts and suppressions. */
export interface DueData {
  campaigns: Map<string, Campaign>;
  contacts: Map<string, ContactProfile>;
  lastReceiptAt: (send: ClaimedSend) => number | undefined;
  suppressed: (accountId: string, channel: ClaimedSend['channel'], address: string) => boolean;
}

/**
 * The batch's data, a statement per table, in the transaction `tx` (one snapshot): on SQLite the
 * claim's own (dispatch-claim.ts). On PostgreSQL the claim statement reads the same
 * (dispatch-claim.pg.ts), with the same queries and the same assembly of their rows.
 *
 * Each statement is built and compiled once (db/constant-statements.ts): a list of ids is ONE
 * JSON parameter read as a subquery, so the text is the same for a batch of any size. Built per
 * batch, the dozen statements' query trees were a tenth of the dispatcher's CPU in a burst on
 * SQLite (docs/performance.md, eleventh session).
 */
export async function readDueData(tx: Tx, sends: ClaimedSend[]): Promise<DueData> {
  const checkReentry = sends.filter((s) => !s.test);
  // Each list as one JSON parameter (db/constant-statements.ts, jsonListIn).
  const values = {
    campaignIds: jsonIds(sends, 'campaign_id'),
    contactIds: jsonIds(sends, 'contact_id'),
    receiptCampaigns: jsonIds(checkReentry, 'campaign_id'),
    receiptContacts: jsonIds(checkReentry, 'contact_id'),
  };
  const read = <R>(name: string, query: (ids: (list: keyof typeof values) => Expression<string>) => Compilable<R>) =>
    DUE_READS.run<R>(tx, name, values, (bind) => query((list) => jsonListIn(tx, bind(list)))).then((result) => result.rows);
  const profiles = <K extends keyof ContactProfileRows>(part: K) =>
    read(part, (ids) => contactProfileQueries(tx, ids('contactIds'))[part]) as Promise<ContactProfileRows[K]>;
  const [campaignRows, rows, emails, phones, tags, fieldRows, kpiRows, noteRows, trackers, receipts] = await Promise.all([
    read('campaigns', (ids) => campaignsWithWebhooksQuery(tx, ids('campaignIds'))),
    profiles('rows'),
    profiles('emails'),
    profiles('phones'),
    profiles('tags'),
    profiles('fieldRows'),
    profiles('kpiRows'),
    profiles('noteRows'),
    profiles('trackers'),
    checkReentry.length === 0 ? [] : read('receipts', (ids) => receiptsQuery(tx, ids('receiptCampaigns'), ids('receiptContacts'))),
  ]);
  const contacts = assembleContactProfiles(
    sends.map((s) => ({ accountId: s.account_id, contactId: s.contact_id })),
    { rows, emails, phones, tags, fieldRows, kpiRows, noteRows, trackers },
  );
  // Second step, same snapshot: which of the addresses the sends would go to have bounced.
  const wanted = addressesOf(sends, contacts).map((w) => [w.accountId, w.channel, w.address]);
  const suppressed =
    wanted.length === 0
      ? []
      : (await DUE_READS.run(tx, 'suppressed', { wanted: JSON.stringify(wanted) }, (bind) => suppressedAmongQuery(tx, bind('wanted'))))
          .rows;
  return {
    campaigns: campaignsFrom(
      sends.map((s) => ({ accountId: s.account_id, campaignId: s.campaign_id })),
      groupCampaignRows(campaignRows as Parameters<typeof groupCampaignRows>[0]),
    ),
    contacts,
    lastReceiptAt: latestReceiptOf((receipts as ReceiptRow[]).map((r) => ({ ...r, at: Number(r.at) }))),
    suppressed: suppressedFrom(suppressed),
  };
}

/** readDueData's statements, compiled once per engine. */
const DUE_READS = new StatementShapes();

const jsonIds = (sends: ClaimedSend[], column: 'campaign_id' | 'contact_id') => JSON.stringify([...new Set(sends.map((s) => s[column]))]);

type ReceiptRow = { id: string; account_id: string; campaign_id: string; contact_id: string; at: number | string };

/** The verdict of each send of a batch from its data: the rules, once, whichever engine read the data. */
export function verdictsOf(sends: ClaimedSend[], data: DueData, now: number): Map<string, Verdict> {
  const { campaigns, contacts, lastReceiptAt, suppressed } = data;
  const verdicts = new Map<string, Verdict>();
  for (const send of sends) {
    // Ids are unique across accounts, and the readers drop rows of another account.
    const campaign = campaigns.get(send.campaign_id);
    const contact = contacts.get(send.contact_id);
    verdicts.set(
      send.id,
      verdictOf(
        send,
        campaign,
        contact,
        now,
        () => (send.test ? undefined : lastReceiptAt(send)),
        (to) => suppressed(send.account_id, send.channel, to),
      ),
    );
  }
  return verdicts;
}

function verdictOf(
  send: ClaimedSend,
  campaign: Campaign | undefined,
  contact: ContactProfile | undefined,
  now: number,
  lastReceipt: () => number | undefined,
  isSuppressed: (to: string) => boolean,
): Verdict {
  if (!campaign || (!campaign.active && !send.test)) return { end: 'error', reason: 'campaign not active' };
  if (!contact) return { end: 'error', reason: 'contact not found' };
  if (contact.optedOut) return { end: 'optout', reason: null };
  if (!send.test && rejectedByReentry(campaign, lastReceipt(), now)) return { end: 'rejected', reason: null };
  const to = addressOf(send, contact);
  if (!to) return { end: 'error', reason: CHANNEL_REGISTRY[campaign.channel].missingAddressReason };
  if (isSuppressed(to)) return { end: 'error', reason: SUPPRESSED_REASON };
  return { campaign, contact, to };
}

/** The reason of a send that ends because its address bounced before (decisions.md, Email). */
export const SUPPRESSED_REASON = 'address suppressed: an earlier message to it bounced';

/** Where a send goes: a test's chosen address, else its channel's primary address of the contact. */
function addressOf(send: ClaimedSend, contact: ContactProfile): string | null {
  return send.testTo ?? recipientAddress(send.channel, { email: contact.emails[0], phone: contact.phones[0] });
}

/** The address each send would go to (its channel's primary address of the contact). */
function addressesOf(sends: ClaimedSend[], contacts: Map<string, ContactProfile>) {
  const wanted: { accountId: string; channel: ClaimedSend['channel']; address: string }[] = [];
  for (const send of sends) {
    const contact = contacts.get(send.contact_id);
    const address = contact && addressOf(send, contact);
    if (address) wanted.push({ accountId: send.account_id, channel: send.channel, address });
  }
  return wanted;
}
