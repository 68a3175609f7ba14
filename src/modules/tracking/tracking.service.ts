import type { Db } from '../../db/connect.js';
import type { Queryable } from '../../db/queryable.js';
import { findSendById, hasEngagement, insertEngagement, type EngagedSend } from './engagements.repo.js';

export type { EngagedSend } from './engagements.repo.js';

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

/**
 * Records an open of the send unless it has one already: a WhatsApp read receipt counts once
 * (the callbacks run it inside their transaction).
 */
export async function recordOpenOnce(db: Queryable, send: EngagedSend, at: number): Promise<void> {
  if (!(await hasEngagement(db, send, 'open'))) await insertEngagement(db, send, 'open', null, at);
}
