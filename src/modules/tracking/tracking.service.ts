import type { Db } from '../../db/connect.js';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import { type EngagedSend, findSendById, hasEngagement, insertEngagement } from './engagements.repo.js';

/**
 * Counts an open (pixel fetch) or a click of a send named by a genuine token. Every fetch or
 * click is a row: totals count rows, unique counts distinct sends (campaignStats). Test sends
 * are left out of the statistics, so nothing is recorded for them. Returns false when the
 * send does not exist (the caller answers 404); `count: false` only checks that (HEAD).
 */
export async function trackEngagement(
  db: Db,
  engagement: { sendId: string; kind: 'open' } | { sendId: string; kind: 'click'; url: string },
  options: { count: boolean; now?: number },
): Promise<boolean> {
  const send = await findSendById(db, engagement.sendId);
  if (!send) return false;
  if (options.count && !send.test) {
    await insertEngagement(db, send, engagement.kind, engagement.kind === 'click' ? engagement.url : null, options.now ?? Date.now());
  }
  return true;
}

export type { EngagedSend } from './engagements.repo.js';

/**
 * A WhatsApp read receipt: one open per send however often Meta repeats it, none for a test
 * send. Runs in the caller's transaction, which holds the send row (see applyChanges).
 */
export async function recordReadOnce(tx: Queryable, send: EngagedSend, at: number): Promise<void> {
  if (send.test || (await hasEngagement(kyselyOf(tx), send, 'open'))) return;
  await insertEngagement(kyselyOf(tx), send, 'open', null, at);
}

/**
 * The send's unsubscribe link opted its contact out: counted once for the campaign that sent it
 * (its statistics' `unsubscribes`), never for a test send. Runs in the opt-out's transaction.
 */
export async function recordUnsubscribe(tx: Queryable, send: EngagedSend, at: number): Promise<void> {
  if (send.test) return;
  await insertEngagement(kyselyOf(tx), send, 'unsubscribe', null, at);
}
