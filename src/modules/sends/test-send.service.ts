import { CHANNEL_REGISTRY, recipientAddress } from '../../channels/registry.js';
import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Campaign } from '../campaigns/campaign.js';
import { insertSend, lockContact, recipientState } from './sends.repo.js';

/**
 * Queues a test send of `campaign` to one contact, due `now` and marked `test` (the campaign's
 * own checks come first: modules/campaigns/campaign-test-send.ts). No trigger rules: no
 * activation, re-entry or allowance. An opted-out contact still gets nothing. `testTo`: the
 * address the message goes to instead of the contact's (the contact only lends its data).
 */
export async function queueTestSend(
  db: Db,
  campaign: Campaign,
  contactId: string,
  now: number,
  triggerData?: Record<string, unknown>,
  testTo?: string,
): Promise<string> {
  const accountId = campaign.accountId;
  return inTransaction(db, async (tx) => {
    const contact = await lockContact(tx, db.engine, accountId, contactId);
    if (!contact) throw new AppError('LEAD_NOT_FOUND');
    if (contact.optedOut) throw invalid('/contactId', 'the contact opted out: nothing is sent to it, test sends included');
    const state = await recipientState(tx, accountId, contactId, campaign.id);
    const to = testTo ?? recipientAddress(campaign.channel, state);
    if (!to) throw invalid('/contactId', CHANNEL_REGISTRY[campaign.channel].missingAddressReason);
    const id = newId('snd');
    await insertSend(tx, {
      id,
      account_id: accountId,
      campaign_id: campaign.id,
      contact_id: contactId,
      status: 'queued',
      channel: campaign.channel,
      due_at: now,
      reason: null,
      to_address: to,
      created_at: now,
      test: 1,
      trigger_data: triggerData === undefined ? null : JSON.stringify(triggerData),
      test_to: testTo ?? null,
    });
    return id;
  });
}
