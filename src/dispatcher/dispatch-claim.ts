import type { Db } from '../db/connect.js';
import { inTransaction } from '../db/transaction.js';
import { type ClaimedSend, claimIn, QUEUE_WRITE } from './dispatch.repo.js';
import { claimWithDueData } from './dispatch-claim.pg.js';
import { type DueData, readDueData } from './due-checks.js';

/** A claimed batch, with what its due-time checks and its rendering read (due-checks.ts). */
export interface ClaimedBatch {
  sends: ClaimedSend[];
  data: DueData;
  /** PostgreSQL: the queue's look-ahead, read by the claim's statement (lookAheadOfClaim); SQLite reads it apart. */
  nextDueAt?: number | null;
}

/**
 * Claims a batch of due sends and reads its data in one unit of work, on either engine.
 *
 * PostgreSQL: one statement (dispatch-claim.pg.ts), one round trip, which also reads the
 * queue's look-ahead (when the loop should look next), a round trip more otherwise. SQLite: one job of the
 * commit queue (db/transaction.ts): the claim statement, then the reads, a statement per table,
 * in the same transaction. A separate read transaction cost its own begin and commit and a turn
 * of the event loop per batch. The reads see the claim (a claimed send counts as a receipt), as
 * PostgreSQL's do by their own rule. A claim that finds nothing reads nothing.
 */
export async function claimBatch(db: Db, now: number, leaseMs: number, limit: number): Promise<ClaimedBatch> {
  if (db.engine === 'postgres') return claimWithDueData(db, now, leaseMs, limit);
  return inTransaction(
    db,
    async (tx) => {
      const sends = await claimIn(tx, db, now, leaseMs, limit);
      return { sends, data: sends.length > 0 ? await readDueData(tx, sends) : NOTHING_READ };
    },
    QUEUE_WRITE,
  );
}

/** The data of an empty batch: there is nothing to check. */
const NOTHING_READ: DueData = {
  campaigns: new Map(),
  contacts: new Map(),
  lastReceiptAt: () => undefined,
  suppressed: () => false,
};
