import { type Db, PRIORITY_POOL_SIZE } from '../db/connect.js';
import { inPriorityStatement, inPriorityTransaction, type Tx } from '../db/transaction.js';
import { type ClaimedSend, type Delivered, markSentMany, QUEUE_WRITE } from './dispatch.repo.js';

interface Waiting {
  send: ClaimedSend;
  result: Delivered;
  now: number;
  /** Work that commits with the outcome (queueing the send's webhooks), if any. */
  alsoInTx?: (tx: Tx) => Promise<void>;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * Writes the outcomes of delivered sends as a group commit of their own: one statement for
 * every outcome waiting, on the priority connection (db/transaction.ts), so none of them
 * queues behind API requests.
 *
 * On PostgreSQL a group is what finished in the same turn of the event loop (taken on
 * setImmediate: the deliveries whose answers arrived together), plus what arrived while every
 * writer was busy: each statement is a round trip. On SQLite the write joins the commit queue
 * (an urgent job, db/transaction.ts) in the callback that read the server's answer, so it
 * commits in the group of that turn's check phase, and takes what is waiting when it runs: a
 * turn more of waiting would be a window in which a crash sends the message again.
 * Without webhooks to queue, the group is ONE statement (one round trip on PostgreSQL, no
 * BEGIN/COMMIT; one savepoint and one commit on SQLite); with some, one transaction: the
 * statement, then each recorded send's webhook deliveries, then the commit, so a sent send never
 * lacks its webhooks nor gets them twice. The window between the server's acceptance and the
 * record (docs/decisions.md, Sends and delivery) is, on PostgreSQL, at most the rest of the turn
 * and one write ahead of it; on SQLite the time the answer waited to be read.
 */
export class OutcomeBatch {
  private waiting: Waiting[] = [];
  private writers = 0;
  private scheduled = false;
  /** SQLite: a write is in the commit queue and has not taken its group yet. */
  private queued = false;
  /**
   * PostgreSQL: writes under way at once, as many as its priority connections, so an outcome
   * never waits for another's round trip while a connection is free. (SQLite has no such bound:
   * a group is answered only once the WAL's fsync is over, db/wal-sync.ts, and the next must not
   * wait for that fsync to be committed: once in the WAL an outcome survives a crash of the
   * process, and on a slow disk an fsync can take seconds while deliveries go on.)
   */
  private readonly maxWriters: number;

  /** Most outcomes in one statement: 6 bound values each stays far below either engine's limit. */
  static readonly MAX = 256;

  constructor(private readonly db: Db) {
    this.maxWriters = PRIORITY_POOL_SIZE;
  }

  /** Resolves once the outcome is committed (QUEUE_WRITE): true when it was recorded, false when the claim was no longer ours. */
  record(send: ClaimedSend, result: Delivered, now: number, alsoInTx?: (tx: Tx) => Promise<void>): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.push({ send, result, now, alsoInTx, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.db.engine === 'sqlite') {
      this.queueSqliteWrite();
      return;
    }
    if (this.scheduled || this.writers >= this.maxWriters) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.waiting.length > 0 && this.writers < this.maxWriters) void this.writeWaiting();
    });
  }

  private async writeWaiting(): Promise<void> {
    this.writers++;
    while (this.waiting.length > 0) {
      let group: Waiting[] = [];
      try {
        const recorded = await this.write((taken) => (group = taken));
        answer(group, recorded);
      } catch (err) {
        // Failed before the statement ran (database closed): everyone waiting fails with it.
        fail(group.length > 0 ? group : this.waiting.splice(0), err);
      }
    }
    this.writers--;
    // Outcomes that came while this writer finished its last group.
    if (this.waiting.length > 0) this.schedule();
  }

  /** SQLite: one write in the commit queue at a time that has not yet taken its group. */
  private queueSqliteWrite(): void {
    if (this.queued) return;
    this.queued = true;
    let group: Waiting[] | undefined;
    this.write((taken) => {
      group = taken;
      this.queued = false;
      // More than one statement's worth: the rest in the next write.
      if (this.waiting.length > 0) this.queueSqliteWrite();
    }).then(
      (recorded) => answer(group ?? [], recorded),
      (err: unknown) => {
        // Failed before it took its group (database closed): everyone waiting fails with it.
        if (group === undefined) this.queued = false;
        fail(group ?? this.waiting.splice(0), err);
      },
    );
  }

  /**
   * One group's write. The group is taken when the write runs, not when it was asked for: what
   * arrived meanwhile goes with it (on SQLite, when a group of the commit queue was running).
   */
  private write(took: (group: Waiting[]) => void): Promise<Set<string>> {
    const take = () => {
      const group = this.waiting.splice(0, OutcomeBatch.MAX);
      took(group);
      return group;
    };
    // On SQLite both are the same (a savepoint in the commit queue); on PostgreSQL the statement
    // runs, and takes its group, at once.
    const withWork = this.waiting.slice(0, OutcomeBatch.MAX).some((w) => w.alsoInTx);
    if (this.db.engine === 'postgres' && !withWork) {
      return inPriorityStatement(
        this.db,
        (tx) => {
          const group = take();
          return group.length > 0 ? markSentMany(tx, group) : Promise.resolve(new Set<string>());
        },
        QUEUE_WRITE,
      );
    }
    return inPriorityTransaction(
      this.db,
      async (tx) => {
        const group = take();
        if (group.length === 0) return new Set<string>();
        const recorded = await markSentMany(tx, group);
        for (const item of group) if (item.alsoInTx && recorded.has(item.send.id)) await item.alsoInTx(tx);
        return recorded;
      },
      QUEUE_WRITE,
    );
  }
}

/** Each outcome of a written group: recorded, or not (its claim was no longer ours). */
function answer(group: Waiting[], recorded: Set<string>): void {
  for (const item of group) item.resolve(recorded.has(item.send.id));
}

/** A failed group is no one's acknowledgement: each caller tries again (dispatcher.ts). */
function fail(group: Waiting[], err: unknown): void {
  for (const item of group) item.reject(err);
}
