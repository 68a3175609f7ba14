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
export async function reentryBlock(tx: Tx, campaign: Campaign, contactId: string, now: number, excludeSendId?: string): Promise<'rejected' | undefined> {
  return rejectedByReentry(campaign, await lastReceipt(tx, campaign.accountId, campaign.id, contactId, excludeSendId), now) ? 'rejected' : undefined;
}

/** The rule itself, given when the contact last received the campaign (undefined: never). */
export function rejectedByReentry(campaign: Campaign, lastReceiptAt: number | undefined, now: number): boolean {
  if (lastReceiptAt === undefined) return false;
  if (!campaign.reentry) return true;
  return campaign.cooldownDays > 0 && now - lastReceiptAt < campaign.cooldownDays * DAY_MS;
}
