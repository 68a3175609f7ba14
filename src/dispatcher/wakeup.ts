import pg from 'pg';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/connect.js';

/**
 * Wake-ups between processes on PostgreSQL: an API process that queued a send NOTIFYs, worker
 * processes LISTEN. In one process the trigger calls the dispatcher directly; on SQLite a
 * separate worker polls (there is no channel between processes).
 */
const CHANNEL = 'herald_sends';

export function notifyThroughDatabase(db: Db, logger: Logger): (dueAt: number) => void {
  // Listeners only learn "look again" (they read the due times from the table), so calls made
  // while a NOTIFY is on its way are covered by one more sent after it: under load that is one
  // NOTIFY per round trip instead of one per trigger, each a query and a pool connection.
  let inFlight = false;
  let again: number | undefined;
  const send = (dueAt: number): void => {
    inFlight = true;
    sql`select pg_notify(${CHANNEL}, ${String(dueAt)})`
      .execute(db.kysely)
      .catch((err) => logger.warn({ err }, 'send wake-up notify failed'))
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

export interface Listener {
  close(): Promise<void>;
}

/** Listens for wake-ups on a dedicated connection, reconnecting after a dropped connection. */
export function listenThroughDatabase(databaseUrl: string, onWake: () => void, logger: Logger): Listener {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', () => onWake());
    next.on('error', (err) => {
      logger.warn({ err }, 'send wake-up listener lost its connection');
      void next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), 1_000);
    });
    try {
      await next.connect();
      await next.query(`listen ${CHANNEL}`);
      client = next;
      // Anything queued while we were not listening is picked up now.
      onWake();
    } catch (err) {
      logger.warn({ err }, 'send wake-up listener could not connect');
      void next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), 1_000);
    }
  };
  void connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
