import type { Db } from '../db/connect.js';
import { inPriorityTransaction } from '../db/transaction.js';
import { suppressAddress } from '../modules/suppressions/suppressions.service.js';
import { type ClaimedSend, markBounced } from './dispatch.repo.js';

/**
 * The recipient's server refused the address for good (decisions.md, Email: bounces): the send
 * ends in error marked bounced, and the address goes on the account's suppression list, in one
 * transaction, so later sends to it end at their due time instead of bouncing again. A priority
 * write, like a delivered send's outcome: the server has answered, and it should be on record.
 */
export async function recordBounce(db: Db, send: ClaimedSend, reason: string, to: string, now: number): Promise<void> {
  await inPriorityTransaction(db, async (tx) => {
    if (!(await markBounced(tx, send, reason, to, now))) return;
    await suppressAddress(tx, { accountId: send.account_id, channel: send.channel, address: to, reason, sendId: send.id, now });
  });
}
