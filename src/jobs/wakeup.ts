import type { Logger } from 'pino';
import type { Db } from '../db/connect.js';
import { pgNotify } from '../db/notify.js';

export { type Listener, listenThroughDatabase } from '../db/notify.js';

/**
 * Wake-ups between processes on PostgreSQL: a process that queued a job NOTIFYs the queue's
 * channel, worker processes LISTEN (db/notify.ts) and notify() their runner. In one process
 * the caller wakes the runner directly; on SQLite a separate worker polls (there is no channel
 * between processes).
 *
 * Listeners only learn "look again" (they read the due times from the table), so calls made
 * while a NOTIFY is on its way are covered by one more sent after it: under load that is one
 * NOTIFY per round trip instead of one per call, each a query and a pool connection.
 */
export function notifyThroughDatabase(db: Db, channel: string, logger: Pick<Logger, 'warn'>): (dueAt: number) => void {
  let inFlight = false;
  let again: number | undefined;
  const send = (dueAt: number): void => {
    inFlight = true;
    pgNotify(db, channel, String(dueAt))
      .catch((err) => logger.warn({ err, channel }, 'wake-up notify failed'))
      .finally(() => {
        inFlight = false;
        if (again === undefined) return;
        const next = again;
        again = undefined;
        send(next);
      });
  };
  return (dueAt) => {
    if (!inFlight) send(dueAt);
    else again = Math.min(again ?? dueAt, dueAt);
  };
}
