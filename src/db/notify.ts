import pg from 'pg';
import type { Logger } from 'pino';
import { constantStatement } from './constant-statements.js';
import { kyselyOf, type Queryable } from './queryable.js';

/**
 * PostgreSQL's channels between processes (NOTIFY / LISTEN): how an API process wakes the
 * job runners of worker processes. SQLite has nothing of the kind (its workers poll).
 */

const NOTIFY = constantStatement('select pg_notify(?, ?)');

/** Sends `payload` to the listeners of `channel`. */
export async function pgNotify(db: Queryable, channel: string, payload: string): Promise<void> {
  await NOTIFY(kyselyOf(db), [channel, payload]);
}

export interface Listener {
  close(): Promise<void>;
}

/**
 * Listens on `channel` on a dedicated connection, reconnecting after a dropped connection.
 * `onWake` gets the time a notification names (its payload: the due time of what was queued,
 * wakeup.ts), or nothing when it names none (and on every connect: look now).
 */
export function listenThroughDatabase(
  databaseUrl: string,
  channel: string,
  onWake: (at?: number) => void,
  logger: Pick<Logger, 'warn'>,
): Listener {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', (message) => onWake(timeOf(message.payload)));
    next.on('error', (err) => {
      logger.warn({ err, channel }, 'wake-up listener lost its connection');
      void next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), 1_000);
    });
    try {
      await next.connect();
      await next.query(`listen ${pg.escapeIdentifier(channel)}`);
      client = next;
      // Anything queued while we were not listening is picked up now.
      onWake();
    } catch (err) {
      logger.warn({ err, channel }, 'wake-up listener could not connect');
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

/** The epoch milliseconds a payload names, or undefined (an empty or foreign payload: look now). */
function timeOf(payload: string | undefined): number | undefined {
  const at = Number(payload);
  return payload && Number.isSafeInteger(at) ? at : undefined;
}
