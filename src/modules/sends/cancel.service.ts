import type { Db } from '../../db/connect.js';
import { inWriteUnit } from '../../db/write-unit.js';
import { AppError } from '../../errors.js';
import { leadLookupOf } from '../contacts/lead-lookup.js';
import { type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import { cancelPendingSend } from './cancel.repo.js';
import type { CancelInput, CancelResult } from './sends.schemas.js';

/**
 * `POST|GET /api/campaigns/cancel`: a conditional update on `status = 'pending'`, so it can
 * never overlap with a restart or with the dispatcher claiming the send. Nothing pending is not
 * an error (`cancelled: false`), and a deactivated campaign's pending send can still be cancelled.
 *
 * One statement (cancelPendingSend) looks the campaign and the contact up and cancels, so a
 * cancel is one round trip on PostgreSQL, with no transaction (inWriteUnit). The statement only
 * reports facts; the rules and their order are here. With an Idempotency-Key (POST only) it
 * runs in a transaction and the answer is stored in it too (oncePerKey).
 */
export async function cancelSend(
  db: Db,
  accountId: string,
  input: CancelInput,
  now = Date.now(),
  key?: IdempotentRequest,
): Promise<CancelResult> {
  return inWriteUnit(
    db,
    (q) =>
      oncePerKey(q, key, async () => {
        const facts = await cancelPendingSend(q, db.engine, accountId, input.campaignId, leadLookupOf(input.lead), now);
        // cancelPendingSend's guard cancels nothing in any of these three cases.
        if (facts.schedule === undefined) throw new AppError('CAMPAIGN_NOT_FOUND');
        if (facts.schedule !== 'api') throw new AppError('CAMPAIGN_NOT_API');
        if (facts.contactId === undefined) throw new AppError('LEAD_NOT_FOUND');
        return { cancelled: facts.cancelled, campaignId: input.campaignId, leadId: facts.contactId };
      }),
    { transaction: key !== undefined },
  );
}
