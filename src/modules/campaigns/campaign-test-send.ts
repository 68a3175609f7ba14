import { CHANNEL_REGISTRY, recipientAddress } from '../../channels/registry.js';
import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { insertSend, lockContact, recipientState } from '../sends/sends.repo.js';
import { missingForActivation } from './campaign-settings.js';
import { getCampaign } from './campaigns.service.js';

/**
 * `POST /campaigns/:id/test-send`: a real send of the campaign to one contact, queued due now
 * and delivered by the dispatcher through the campaign's channel, marked `test`. It skips the
 * trigger rules (activation, re-entry, allowance) so a draft can be tried, and it is left out
 * of statistics and of the allowance. An opted-out contact still gets nothing: the spec allows
 * no message to them, whoever asks.
 */
export async function testSend(deps: { db: Db; wakeup?: (dueAt: number) => void }, accountId: string, campaignId: string, contactId: string): Promise<{ sendId: string }> {
  const { db } = deps;
  const campaign = await getCampaign(db, accountId, campaignId);
  const missing = missingForActivation(campaign);
  if (missing.length > 0) throw invalid('/campaign', `the ${campaign.channel} campaign has no ${missing.join(', ')}: complete it before a test send`);

  const now = Date.now();
  const sendId = await inTransaction(db, async (tx) => {
    const contact = await lockContact(tx, db.engine, accountId, contactId);
    if (!contact) throw new AppError('LEAD_NOT_FOUND');
    if (contact.optedOut) throw invalid('/contactId', 'the contact opted out: nothing is sent to it, test sends included');
    const state = await recipientState(tx, accountId, contactId, campaignId);
    const to = recipientAddress(campaign.channel, state);
    if (!to) throw invalid('/contactId', CHANNEL_REGISTRY[campaign.channel].missingAddressReason);
    const id = newId('snd');
    await insertSend(tx, {
      id,
      account_id: accountId,
      campaign_id: campaignId,
      contact_id: contactId,
      status: 'queued',
      channel: campaign.channel,
      due_at: now,
      lease_until: null,
      attempts: 0,
      reason: null,
      to_address: to,
      provider_message_id: null,
      processed_at: null,
      delivered_at: null,
      sent_at: null,
      created_at: now,
      updated_at: now,
      test: 1,
    });
    return id;
  });
  deps.wakeup?.(now);
  return { sendId };
}
