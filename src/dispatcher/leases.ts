import type { Logger } from 'pino';
import type { Db } from '../db/connect.js';
import { inPriorityStatement } from '../db/transaction.js';
import type { ClaimedSend } from './claim.js';

/** Renewals per lease: a renewal that is late by up to three quarters of the lease is still in time. */
const RENEWALS_PER_LEASE = 4;

/**
 * The leases of the sends this worker holds, renewed while it works on them: a claimed send
 * stays ours however long its delivery takes (a stalled SMTP server, a slow API), and a
 * worker that dies leaves its sends to others after at most one lease. Every quarter of a
 * lease, the sends held for longer than that get a full lease again, in one fenced statement
 * on the priority connections (API load cannot hold a renewal up). A send whose renewal found
 * it taken over is no longer ours: it is not delivered (`holds` says so).
 */
export class LeaseKeeper {
  private readonly held = new Map<string, { attempts: number; until: number }>();
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly leaseMs: number,
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {}

  /** Sends just claimed at `claimedAt` (their lease runs from then). */
  hold(sends: ClaimedSend[], claimedAt: number): void {
    for (const send of sends) this.held.set(send.id, { attempts: send.attempts, until: claimedAt + this.leaseMs });
    if (this.held.size > 0 && !this.timer) {
      this.timer = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.leaseMs / RENEWALS_PER_LEASE)));
      // Renewals alone must not keep the process alive.
      this.timer.unref();
    }
  }

  /** The send's outcome is written (or it was given up): no more renewals. */
  release(send: ClaimedSend): void {
    this.held.delete(send.id);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * True while the send's lease is ours for at least a quarter lease more: enough for a
   * renewal to come. False once it was taken over, or when renewals failed (database out of
   * reach) and it is about to run out: then another worker may claim it, and delivering it
   * here too would send it twice.
   */
  holds(send: ClaimedSend): boolean {
    const lease = this.held.get(send.id);
    return lease !== undefined && lease.attempts === send.attempts && lease.until - this.now() > this.leaseMs / RENEWALS_PER_LEASE;
  }

  /** No more renewals (the process is stopping): what is still held runs out and is retried. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.held.clear();
    await this.renewing;
  }

  private async renew(): Promise<void> {
    if (this.renewing) return;
    const now = this.now();
    const due = [...this.held].filter(([, lease]) => lease.until - now <= this.leaseMs - this.leaseMs / RENEWALS_PER_LEASE);
    if (due.length === 0) return;
    this.renewing = this.extend(due, now)
      .catch((err) => this.logger.error({ err }, 'renewing send leases failed'))
      .finally(() => (this.renewing = undefined));
    await this.renewing;
  }

  private async extend(due: [string, { attempts: number; until: number }][], now: number): Promise<void> {
    const until = now + this.leaseMs;
    // Fenced like an outcome (status sending, the attempt we claimed); grouped by attempt
    // number, as an OR per send would nest too deep for SQLite with many sends in flight.
    const byAttempts = new Map<number, string[]>();
    for (const [id, lease] of due) byAttempts.set(lease.attempts, [...(byAttempts.get(lease.attempts) ?? []), id]);
    const renewed = await inPriorityStatement(this.db, (tx) =>
      tx
        .updateTable('sends')
        .set({ lease_until: until })
        .where('status', '=', 'sending')
        .where((eb) => eb.or([...byAttempts].map(([attempts, ids]) => eb.and([eb('attempts', '=', attempts), eb('id', 'in', ids)]))))
        .returning('id')
        .execute(),
    );
    const ours = new Set(renewed.map((row) => row.id));
    for (const [id, lease] of due) {
      // Released meanwhile (its outcome was written): nothing to do.
      if (this.held.get(id) !== lease) continue;
      // Not renewed: taken over by another worker, or its outcome was just written.
      lease.until = ours.has(id) ? until : 0;
    }
  }
}
