import { type Db, PRIORITY_POOL_SIZE } from '../db/connect.js';
import { inPriorityStatement } from '../db/transaction.js';
import { type ClaimedSend, type Delivered, markSentMany } from './dispatch.repo.js';

interface Waiting {
  send: ClaimedSend;
  result: Delivered;
  now: number;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * Writes the outcomes of delivered sends (those with nothing else to write in their
 * transaction) as a group commit of their own: one statement for every outcome waiting.
 *
 * Nothing waits on purpose. While a write is free an outcome is written at once, alone; while
 * every write is under way (one on SQLite), the outcomes that arrive meanwhile wait for one
 * (they would have waited for the database anyway) and then go together, in one priority
 * statement: one savepoint and one commit on SQLite, one round trip on PostgreSQL, for the whole
 * group. The window between the server's acceptance and the record (docs/decisions.md, Sends
 * and delivery) is never longer than one write ahead of it, as before, and the cost per send
 * falls as the rate rises.
 */
export class OutcomeBatch {
  private waiting: Waiting[] = [];
  private writers = 0;
  /**
   * Writes under way at once: on PostgreSQL as many as its priority connections, so an outcome
   * never waits for another's round trip while a connection is free (as before the grouping);
   * on SQLite one, as there is one connection and one commit queue.
   */
  private readonly maxWriters: number;

  /** Most outcomes in one statement: 6 bound values each stays far below either engine's limit. */
  static readonly MAX = 256;

  constructor(private readonly db: Db) {
    this.maxWriters = db.engine === 'postgres' ? PRIORITY_POOL_SIZE : 1;
  }

  /** Resolves once the outcome is durable: true when it was recorded, false when the claim was no longer ours. */
  record(send: ClaimedSend, result: Delivered, now: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.push({ send, result, now, resolve, reject });
      if (this.writers < this.maxWriters) void this.writeWaiting();
    });
  }

  private async writeWaiting(): Promise<void> {
    this.writers++;
    while (this.waiting.length > 0) {
      let group: Waiting[] = [];
      try {
        // The group is taken when the statement runs, not when it was asked for: on SQLite the
        // commit queue starts it a turn later, and what arrived meanwhile goes with it.
        const recorded = await inPriorityStatement(this.db, (tx) => {
          group = this.waiting.splice(0, OutcomeBatch.MAX);
          return group.length > 0 ? markSentMany(tx, group) : Promise.resolve(new Set<string>());
        });
        for (const item of group) item.resolve(recorded.has(item.send.id));
      } catch (err) {
        // The caller tries again (dispatcher.ts); a failed group is no one's acknowledgement.
        // Failed before the statement ran (database closed): everyone waiting fails with it.
        if (group.length === 0) group = this.waiting.splice(0);
        for (const item of group) item.reject(err);
      }
    }
    this.writers--;
  }
}
