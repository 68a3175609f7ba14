import Database from 'better-sqlite3';
import { createOwnerOnly } from './owner-only-file.js';

/** A message the SMTP server accepted, as the journal keeps it until the send's outcome is written. */
export interface Accepted {
  sendId: string;
  /** Where it went (the envelope's recipient). */
  to: string;
  messageId: string;
  /** False when the server took the message but none of its recipients (recorded sent, undelivered). */
  delivered: boolean;
  acceptedAt: number;
}

/** Entries a crash left behind longer than this go when a thread opens the journal (see prune). */
export const JOURNAL_KEEP_MS = 7 * 24 * 60 * 60_000;

/**
 * The SMTP thread's own note of every message the server accepted, written by the thread the
 * moment the server's reply is read, before the dispatcher's thread hears of it
 * (docs/decisions.md, "The SMTP pool on its own thread"). It is what lets the thread run ahead
 * of the outcome writes: a crash of the process between the server's acceptance and the
 * outcome's commit leaves the note, and the claim that takes the send again finds it
 * (Dispatcher.checkBatch) and records the send sent instead of sending it twice.
 *
 * A SQLite file of its own next to herald.db (so the thread never waits for the queue's write
 * lock): WAL, `synchronous=OFF`. A written entry is in the operating system's hands, which a
 * crash of the process does not undo; a power cut may lose the last ones, and with them the
 * message goes out again, as with the queue's own writes (dispatch.repo.ts, QUEUE_WRITE). The
 * thread is its only writer; the dispatcher's thread only reads it. An entry goes once its
 * send's outcome is written (forget).
 */
export class AcceptanceJournal {
  readonly #db: Database.Database;
  readonly #addAll: (entries: Accepted[]) => void;
  readonly #forget: Database.Statement;
  readonly #among: Database.Statement;

  constructor(readonly path: string) {
    createOwnerOnly(path);
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = OFF');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(`create table if not exists accepted (
      send_id text primary key, to_address text not null, message_id text not null,
      delivered integer not null, accepted_at integer not null) without rowid`);
    const add = this.#db.prepare('insert or replace into accepted values (?, ?, ?, ?, ?)');
    this.#addAll = this.#db.transaction((entries: Accepted[]) => {
      for (const { sendId, to, messageId, delivered, acceptedAt } of entries) add.run(sendId, to, messageId, delivered ? 1 : 0, acceptedAt);
    });
    this.#forget = this.#db.prepare('delete from accepted where send_id in (select value from json_each(?))');
    this.#among = this.#db.prepare(
      'select send_id, to_address, message_id, delivered, accepted_at from accepted where send_id in (select value from json_each(?))',
    );
  }

  /** Notes these acceptances, in one transaction. */
  add(entries: Accepted[]): void {
    this.#addAll(entries);
  }

  /** Their outcomes are written: their entries go. */
  forget(sendIds: string[]): void {
    if (sendIds.length > 0) this.#forget.run(JSON.stringify(sendIds));
  }

  /** The entries of these sends, by send id (most sends have none). */
  among(sendIds: string[]): Map<string, Accepted> {
    const found = new Map<string, Accepted>();
    if (sendIds.length === 0) return found;
    const rows = this.#among.all(JSON.stringify(sendIds)) as AcceptedRow[];
    for (const row of rows) {
      found.set(row.send_id, {
        sendId: row.send_id,
        to: row.to_address,
        messageId: row.message_id,
        delivered: row.delivered === 1,
        acceptedAt: row.accepted_at,
      });
    }
    return found;
  }

  /**
   * Entries older than `before`: left by a crash between an outcome's write and its forget
   * (harmless: a sent send is never claimed again). A send whose worker died is claimed again
   * once its lease runs out, minutes later, not a week: only a Herald stopped for longer would
   * meet its entry gone.
   */
  prune(before: number): void {
    this.#db.prepare('delete from accepted where accepted_at < ?').run(before);
  }

  close(): void {
    this.#db.close();
  }
}

interface AcceptedRow {
  send_id: string;
  to_address: string;
  message_id: string;
  delivered: number;
  accepted_at: number;
}
