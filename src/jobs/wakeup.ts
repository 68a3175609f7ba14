import type { Logger } from 'pino';
import type { Db } from '../db/connect.js';
import { pgNotify } from '../db/notify.js';

export { type Listener, listenThroughDatabase } from '../db/notify.js';

/**
 * How often a worker that other processes wake (herald.ts) reads the due times when nothing
 * wakes it: a send due later than that is seen by the worker's own look before it is due.
 */
export const WAKEABLE_WORKER_IDLE_POLL_MS = 5_000;

/** Least time between two NOTIFYs of one process (the wake-ups asked for meanwhile share the next). */
const MIN_NOTIFY_GAP_MS = 10;

/** Sends due this much later need no wake-up: the idle poll, plus a second for the clocks of two machines. */
const WAKEUP_HORIZON_MS = WAKEABLE_WORKER_IDLE_POLL_MS + 1_000;

/**
 * Wake-ups between processes on PostgreSQL: a process that queued a job NOTIFYs the queue's
 * channel, worker processes LISTEN (db/notify.ts) and notify() their runner. In one process
 * the caller wakes the runner directly; on SQLite a separate worker polls (there is no channel
 * between processes).
 *
 * A NOTIFY names the earliest due time of the wake-ups it carries: a listener looks again then
 * (now, for a send due now), and reads the other due times from the table. So wake-ups asked for
 * while a NOTIFY is on its way, or within MIN_NOTIFY_GAP_MS after it, are covered by one more
 * sent after that: under load at most one NOTIFY per 10 ms instead of one per trigger, each a
 * statement, a pool connection and a commit that takes PostgreSQL's notification queue lock.
 * A send due beyond the worker's idle poll (a delay restarted) wakes nobody: its worker reads it
 * in time by itself.
 */
export function notifyThroughDatabase(
  db: Db,
  channel: string,
  logger: Pick<Logger, 'warn'>,
  now: () => number = Date.now,
): (dueAt: number) => void {
  let busy = false;
  let again: number | undefined;
  const send = (dueAt: number): void => {
    busy = true;
    pgNotify(db, channel, String(dueAt))
      .catch((err) => logger.warn({ err, channel }, 'wake-up notify failed'))
      .finally(() => {
        // Unref'd: a wake-up still owed at shutdown is a send the worker's idle poll finds.
        setTimeout(() => {
          busy = false;
          if (again === undefined) return;
          const next = again;
          again = undefined;
          send(next);
        }, MIN_NOTIFY_GAP_MS).unref();
      });
  };
  return (dueAt) => {
    if (dueAt - now() > WAKEUP_HORIZON_MS) return;
    if (!busy) send(dueAt);
    else again = Math.min(again ?? dueAt, dueAt);
  };
}
