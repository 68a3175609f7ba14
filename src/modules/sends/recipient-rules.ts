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
  const last = await lastReceipt(tx, campaign.accountId, campaign.id, contactId, excludeSendId);
  if (last === undefined) return undefined;
  if (!campaign.reentry) return 'rejected';
  if (campaign.cooldownDays > 0 && now - last < campaign.cooldownDays * DAY_MS) return 'rejected';
  return undefined;
}

export function missingAddressReason(channel: Campaign['channel']): string {
  return channel === 'email' ? 'contact has no email address' : 'contact has no phone number';
}
