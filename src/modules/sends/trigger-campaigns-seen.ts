import type { TriggerCampaign } from './trigger-state.repo.js';

/** Campaigns remembered per process: more is forgotten all at once (a campaign read again costs one round trip). */
const KEPT = 1_000;

/**
 * The campaign of each recent trigger with a `lead` object, as this process last read it (by
 * account and campaign). Only a guess: a trigger for someone new decides on it before its read
 * and writes only if the read, in the same statement, finds the campaign as remembered
 * (trigger-decided-first.repo.ts). A campaign changed in the panel or by another process costs that
 * trigger its usual read and write, and is remembered anew.
 */
const seen = new Map<string, TriggerCampaign>();

const keyOf = (accountId: string, campaignId: string) => `${accountId} ${campaignId}`;

export function rememberCampaign(accountId: string, campaignId: string, campaign: TriggerCampaign | undefined): void {
  const key = keyOf(accountId, campaignId);
  if (campaign === undefined) {
    seen.delete(key);
    return;
  }
  if (seen.size >= KEPT && !seen.has(key)) seen.clear();
  seen.set(key, campaign);
}

export function campaignLastSeen(accountId: string, campaignId: string): TriggerCampaign | undefined {
  return seen.get(keyOf(accountId, campaignId));
}
