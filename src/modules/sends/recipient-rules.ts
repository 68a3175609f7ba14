import type { Tx } from '../../db/transaction.js';
import type { Campaign } from '../campaigns/campaign.js';
import { lastReceipt } from './sends.repo.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The re-entry rule of the spec, checked at trigger time and again when a delayed send comes
 * due (after the opt-out, which the callers read with the contact): one who already received
 * the campaign gets Rejected unless re-entry is on and the cooldown has passed (a cooldown of 0
 * never rejects). `excludeSendId`: at due time the send being checked is not a receipt of its own.
 */
export async function reentryBlock(
  tx: Tx,
  campaign: Campaign,
  contactId: string,
  now: number,
  excludeSendId?: string,
): Promise<'rejected' | undefined> {
  return rejectedByReentry(campaign, await lastReceipt(tx, campaign.accountId, campaign.id, contactId, excludeSendId), now)
    ? 'rejected'
    : undefined;
}

/** The rule itself, given when the contact last received the campaign (undefined: never). */
export function rejectedByReentry(
  campaign: Pick<Campaign, 'reentry' | 'cooldownDays'>,
  lastReceiptAt: number | undefined,
  now: number,
): boolean {
  if (lastReceiptAt === undefined) return false;
  if (!campaign.reentry) return true;
  return campaign.cooldownDays > 0 && now - lastReceiptAt < campaign.cooldownDays * DAY_MS;
}

/** A send as the batch reader of receipts needs it. */
export interface SendOfPair {
  id: string;
  account_id: string;
  campaign_id: string;
  contact_id: string;
}

/**
 * When the contact of each of several sends last received the send's campaign, the send itself
 * aside (lastReceipt's rule), from the receipts read with the batch (due-checks.ts; the
 * PostgreSQL claim): the re-entry rule at due time. Undefined: never received.
 */
export function latestReceiptOf(receipts: (SendOfPair & { at: number })[]): (send: SendOfPair) => number | undefined {
  return (send) => {
    let latest: number | undefined;
    for (const r of receipts) {
      if (r.id === send.id || r.account_id !== send.account_id || r.campaign_id !== send.campaign_id || r.contact_id !== send.contact_id)
        continue;
      if (latest === undefined || r.at > latest) latest = r.at;
    }
    return latest;
  };
}
