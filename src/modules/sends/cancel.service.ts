import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { findCampaign } from '../campaigns/campaigns.service.js';
import { type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import { cancelPending } from './sends.repo.js';
import type { CancelInput, CancelResult } from './sends.schemas.js';
import { requireLead } from './trigger.service.js';

/**
 * `POST|GET /api/campaigns/cancel`: a conditional update on `status = 'pending'`, so it can
 * never overlap with a restart or with the dispatcher claiming the send. Nothing pending is not
 * an error (`cancelled: false`), and a deactivated campaign's pending send can still be cancelled.
 * With an Idempotency-Key (POST only) the answer is stored in the same transaction (oncePerKey).
 */
export async function cancelSend(
  db: Db,
  accountId: string,
  input: CancelInput,
  now = Date.now(),
  key?: IdempotentRequest,
): Promise<CancelResult> {
  return inTransaction(db, (tx) =>
    oncePerKey(tx, key, async () => {
      const campaign = await findCampaign(tx, accountId, input.campaignId);
      if (!campaign) throw new AppError('CAMPAIGN_NOT_FOUND');
      if (campaign.schedule !== 'api') throw new AppError('CAMPAIGN_NOT_API');
      const contactId = await requireLead(tx, accountId, input.lead);
      const cancelled = await cancelPending(tx, accountId, campaign.id, contactId, now);
      return { cancelled, campaignId: campaign.id, leadId: contactId };
    }),
  );
}
