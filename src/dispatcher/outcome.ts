import type { Db } from '../db/connect.js';
import type { SendStatus } from '../db/schema.js';
import { inPriorityStatement, inPriorityTransaction, type Tx } from '../db/transaction.js';
import type { ClaimedSend } from './claim.js';

/**
 * Every outcome write is conditional on the claim still being ours (`status = 'sending'` and
 * the attempt number we claimed): a worker whose lease ran out and was taken over cannot
 * overwrite the newer attempt's result.
 */
function fenced(tx: Tx, send: ClaimedSend) {
  return tx.updateTable('sends').where('id', '=', send.id).where('status', '=', 'sending').where('attempts', '=', send.attempts);
}

/** Ends a claimed send without delivering it (optout, rejected, error at due time). */
export async function finishUndelivered(db: Db, send: ClaimedSend, status: Extract<SendStatus, 'optout' | 'rejected' | 'error'>, reason: string | null, now: number) {
  await fenced(db.kysely, send).set({ status, reason, lease_until: null, updated_at: now }).execute();
}

export interface Delivered {
  to: string;
  providerMessageId: string | null;
  delivered: boolean;
}

/**
 * Marks the send sent and, in the same transaction, runs `alsoInTx` (the webhook deliveries
 * are queued there, so a sent send never lacks its webhooks nor gets them twice). Returns false
 * when the claim was no longer ours.
 *
 * A priority write: the message is out, and until this commits a crash means sending it again,
 * so it does not queue behind API requests, and without `alsoInTx` it is a single statement
 * (db/transaction.ts).
 */
export async function recordSent(db: Db, send: ClaimedSend, result: Delivered, now: number, alsoInTx?: (tx: Tx) => Promise<void>): Promise<boolean> {
  if (!alsoInTx) return inPriorityStatement(db, (tx) => markSent(tx, send, result, now));
  return inPriorityTransaction(db, async (tx) => {
    if (!(await markSent(tx, send, result, now))) return false;
    await alsoInTx(tx);
    return true;
  });
}

async function markSent(tx: Tx, send: ClaimedSend, result: Delivered, now: number): Promise<boolean> {
  const updated = await fenced(tx, send)
    .set({
      status: 'sent',
      to_address: result.to,
      provider_message_id: result.providerMessageId,
      processed_at: now,
      delivered_at: result.delivered ? now : null,
      sent_at: now,
      reason: null,
      lease_until: null,
      updated_at: now,
    })
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** A temporary failure: back to the queue, due again after the backoff. */
export async function requeue(db: Db, send: ClaimedSend, reason: string, dueAt: number, now: number) {
  await fenced(db.kysely, send).set({ status: 'queued', reason, due_at: dueAt, lease_until: null, updated_at: now }).execute();
}
