import { CHANNEL_REGISTRY, recipientAddress } from '../../channels/registry.js';
import type { SendStatus } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { rejectedByReentry } from './recipient-rules.js';
import type { NewSend } from './sends.repo.js';
import type { TriggerResult } from './sends.schemas.js';
import type { TriggerCampaign, TriggerContact, TriggerState } from './trigger-state.repo.js';

/**
 * What the write of a trigger must still find for its decision to stand (trigger-write.repo.ts
 * applies it; on SQLite, inside the unit's transaction, it always holds).
 */
export interface TriggerGuard {
  accountId: string;
  /** The contact unchanged since the read: same version, updated_at and opt-out flag. */
  contact: Pick<TriggerContact, 'id' | 'version' | 'updatedAt' | 'optedOut'>;
  /**
   * `bump`: the write changes what other triggers of the contact decide on (a queued or
   * pending send: re-entry, one pending send), so it adds one to the contact's version and a
   * concurrent trigger that read the old one reads again. `check`: the write only rests on
   * the contact's state (an optout, rejected or error row): it locks the row shared and
   * checks it, and concurrent checks do not invalidate each other.
   */
  contactWrite: 'bump' | 'check';
  /** Set for a send counted against an allowance: the account must still have room. */
  allowance?: { counted: number; version: number };
}

/** The write a trigger decided on, the same on both engines (trigger-write.repo.ts has one executor per engine). */
export type TriggerPlan =
  | { kind: 'insert'; send: NewSend; guard: TriggerGuard }
  /**
   * A second trigger while a delayed send waits restarts its timer: same send, counted once,
   * the latest trigger's data replaces the pending send's. Guarded by the send alone (still
   * pending): a restart changes nothing another trigger's rules read.
   */
  | { kind: 'restart'; accountId: string; sendId: string; dueAt: number; triggerData: string | null; now: number };

export interface TriggerDecision {
  plan: TriggerPlan;
  result: TriggerResult;
  /** Set when a send now waits for the dispatcher (its wakeup). */
  dueAt?: number;
}

/** The campaign checks, in the order of checks (decisions.md): before the lead is looked at, or written. */
export function requireTriggerable(campaign: TriggerCampaign | undefined): TriggerCampaign {
  if (!campaign) throw new AppError('CAMPAIGN_NOT_FOUND');
  if (campaign.schedule !== 'api') throw new AppError('CAMPAIGN_NOT_API');
  if (!campaign.active) throw new AppError('CAMPAIGN_NOT_ACTIVE');
  return campaign;
}

/**
 * The trigger rules, pure over the state the unit read (trigger-state.repo.ts): campaign checks,
 * lead, opt-out, Delay restart, re-entry, allowance, address, in this order. Throws the
 * AppError of a refused trigger (nothing is written then), else returns the one write to make.
 */
export function decideTrigger(state: TriggerState, triggerData: string | null, now: number): TriggerDecision {
  const campaign = requireTriggerable(state.campaign);
  const contact = state.contact;
  if (!contact) throw new AppError('LEAD_NOT_FOUND');
  const base = { campaignId: campaign.id, leadId: contact.id, mode: campaign.mode } as const;
  const guardOf = (contactWrite: TriggerGuard['contactWrite'], counted: boolean): TriggerGuard => ({
    accountId: campaign.accountId,
    contact,
    contactWrite,
    ...(counted && state.allowance ? { allowance: { counted: state.allowance.counted, version: state.allowance.version } } : {}),
  });
  const record = (status: SendStatus, options: { dueAt?: number; to?: string; reason?: string } = {}): TriggerDecision => {
    const sendId = newId('snd');
    const waiting = status === 'queued' || status === 'pending';
    const counted = waiting || status === 'error';
    return {
      plan: {
        kind: 'insert',
        send: {
          id: sendId,
          account_id: campaign.accountId,
          campaign_id: campaign.id,
          contact_id: contact.id,
          status,
          channel: campaign.channel,
          due_at: options.dueAt ?? now,
          reason: options.reason ?? null,
          to_address: options.to ?? null,
          created_at: now,
          trigger_data: triggerData,
        },
        guard: guardOf(waiting ? 'bump' : 'check', counted),
      },
      result: { ...base, sendId, status: status as TriggerResult['status'] },
      dueAt: waiting ? options.dueAt : undefined,
    };
  };

  const dueAt = campaign.mode === 'delay' ? now + campaign.delaySeconds * 1000 : now;
  if (contact.optedOut) return record('optout');
  if (campaign.mode === 'delay' && contact.pendingSendId !== undefined) {
    const sendId = contact.pendingSendId;
    return {
      plan: { kind: 'restart', accountId: campaign.accountId, sendId, dueAt, triggerData, now },
      result: { ...base, sendId, status: 'pending' },
      dueAt,
    };
  }
  if (rejectedByReentry(campaign, contact.lastReceiptAt, now)) return record('rejected');
  // The monthly allowance (UTC calendar month): a trigger past it is refused and nothing is queued.
  if (state.allowance && state.allowance.counted >= state.allowance.allowance) throw new AppError('ALLOWANCE_EXHAUSTED');
  const to = recipientAddress(campaign.channel, contact);
  if (!to) return record('error', { reason: CHANNEL_REGISTRY[campaign.channel].missingAddressReason });
  return record(campaign.mode === 'delay' ? 'pending' : 'queued', { dueAt, to });
}
