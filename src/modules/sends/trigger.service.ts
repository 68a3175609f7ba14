import { CHANNEL_REGISTRY, recipientAddress } from '../../channels/registry.js';
import type { Db, Engine } from '../../db/connect.js';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { SendStatus } from '../../db/schema.js';
import { inTransaction, type Tx, withUniqueRetry } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { checkTriggerDataSize } from '../../json-limits.js';
import type { Campaign } from '../campaigns/campaign.js';
import { findCampaign } from '../campaigns/campaigns.service.js';
import { applyContactWrite } from '../contacts/contacts.service.js';
import { findContactIdByLeadString } from '../contacts/lead-lookup.js';
import { type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import { rejectedByReentry } from './recipient-rules.js';
import { countSendsSince, insertSend, lockAccount, lockContact, recipientState, restartPending } from './sends.repo.js';
import type { TriggerInput, TriggerResult } from './sends.schemas.js';

export interface SendDeps {
  db: Db;
  /** Wakes the dispatcher for a send due at that time (in this process, or through the database). */
  wakeup?: (dueAt: number) => void;
}

/**
 * `POST|GET /api/campaigns/trigger`. Campaign checks, the contact (looked up, or written from a
 * `lead` object), the recipient rules, the allowance and the send row all happen in ONE
 * transaction: a trigger is either fully recorded or not at all. With an Idempotency-Key (POST
 * only) its answer is stored in that transaction too (oncePerKey).
 */
export async function triggerCampaign(
  deps: SendDeps,
  accountId: string,
  input: TriggerInput,
  now = Date.now(),
  key?: IdempotentRequest,
): Promise<TriggerResult> {
  const { db } = deps;
  // Part of the request's shape (decisions.md, order of checks 4): refused before any look-up.
  if (input.data !== undefined) checkTriggerDataSize(input.data, '/data');
  const triggerData = input.data === undefined ? null : JSON.stringify(input.data);
  // A lost race on a unique constraint (a new contact's email, or the one-pending-send index)
  // retries: the second run sees the winner's row and restarts or updates it.
  const outcome = await withUniqueRetry(() =>
    inTransaction(db, (tx) =>
      oncePerKey(
        tx,
        key,
        async () => {
          const campaign = await requireTriggerableCampaign(tx, accountId, input.campaignId);
          const contactId =
            typeof input.lead === 'string'
              ? await requireLead(tx, accountId, input.lead)
              : (await applyContactWrite(tx, accountId, input.lead, now, '/lead')).id;
          const contact = await lockContact(tx, db.engine, accountId, contactId);
          if (!contact) throw new AppError('LEAD_NOT_FOUND');
          return decide(tx, db.engine, { campaign, contactId, optedOut: contact.optedOut, triggerData }, now);
        },
        (outcome) => outcome.result,
      ),
    ),
  );
  if (outcome.dueAt !== undefined) deps.wakeup?.(outcome.dueAt);
  return outcome.result;
}

async function requireTriggerableCampaign(tx: Tx, accountId: string, campaignId: string): Promise<Campaign> {
  const campaign = await findCampaign(tx, accountId, campaignId);
  if (!campaign) throw new AppError('CAMPAIGN_NOT_FOUND');
  if (campaign.schedule !== 'api') throw new AppError('CAMPAIGN_NOT_API');
  if (!campaign.active) throw new AppError('CAMPAIGN_NOT_ACTIVE');
  return campaign;
}

export async function requireLead(tx: Tx, accountId: string, lead: string): Promise<string> {
  const contactId = await findContactIdByLeadString(tx, accountId, lead);
  if (!contactId) throw new AppError('LEAD_NOT_FOUND');
  return contactId;
}

interface Outcome {
  result: TriggerResult;
  /** Set when a send now waits for the dispatcher. */
  dueAt?: number;
}

interface TriggerCase {
  campaign: Campaign;
  contactId: string;
  optedOut: boolean;
  /** The call's `data` as JSON text, or null when it carried none. */
  triggerData: string | null;
}

async function decide(tx: Tx, engine: Engine, { campaign, contactId, optedOut, triggerData }: TriggerCase, now: number): Promise<Outcome> {
  const base = { campaignId: campaign.id, leadId: contactId, mode: campaign.mode } as const;
  const record = async (status: SendStatus, options: { dueAt?: number; to?: string; reason?: string } = {}): Promise<Outcome> => {
    const sendId = newId('snd');
    await insertSend(tx, {
      id: sendId,
      account_id: campaign.accountId,
      campaign_id: campaign.id,
      contact_id: contactId,
      status,
      channel: campaign.channel,
      due_at: options.dueAt ?? now,
      reason: options.reason ?? null,
      to_address: options.to ?? null,
      created_at: now,
      trigger_data: triggerData,
    });
    const waiting = status === 'queued' || status === 'pending';
    return { result: { ...base, sendId, status: status as TriggerResult['status'] }, dueAt: waiting ? options.dueAt : undefined };
  };

  const dueAt = campaign.mode === 'delay' ? now + campaign.delaySeconds * 1000 : now;
  if (optedOut) return record('optout');
  // A second trigger while a delayed send waits restarts its timer: same send, counted once.
  // The latest trigger wins: its data replaces the pending send's (none sent: cleared).
  if (campaign.mode === 'delay') {
    const pendingId = await restartPending(tx, campaign.accountId, campaign.id, contactId, { dueAt, triggerData }, now);
    if (pendingId) return { result: { ...base, sendId: pendingId, status: 'pending' }, dueAt };
  }
  // After the restart: a restart that found nothing may have lost its pending send to a worker's
  // claim meanwhile (claims take no contact lock), and that send must count as received.
  const state = await recipientState(tx, campaign.accountId, contactId, campaign.id);
  if (rejectedByReentry(campaign, state.lastReceiptAt, now)) return record('rejected');
  await checkAllowance(tx, engine, campaign.accountId, state.allowance, now);
  const to = recipientAddress(campaign.channel, state);
  if (!to) return record('error', { reason: CHANNEL_REGISTRY[campaign.channel].missingAddressReason });
  return record(campaign.mode === 'delay' ? 'pending' : 'queued', { dueAt, to });
}

/** The monthly allowance (UTC calendar month): a trigger past it is refused and nothing is queued. */
async function checkAllowance(tx: Tx, engine: Engine, accountId: string, allowance: number | null, now: number): Promise<void> {
  if (allowance === null) return;
  await lockAccount(tx, engine, accountId);
  const date = new Date(now);
  const monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  if ((await countSendsSince(tx, accountId, monthStart)) >= allowance) throw new AppError('ALLOWANCE_EXHAUSTED');
}

/** Sends counted against the allowance this UTC calendar month, as checkAllowance counts them (the account page). */
export async function sendsCountedThisMonth(db: Queryable, accountId: string, now: number): Promise<number> {
  const date = new Date(now);
  return countSendsSince(kyselyOf(db), accountId, Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
}
