import type { Logger } from 'pino';

/** A claimed job as its lease knows it: the attempt number fences every write of its worker. */
export interface LeasedJob {
  id: string;
  attempts: number;
}

/** Extends the leases still ours (status and attempt as claimed) to `until`; answers the ids renewed. */
export type RenewLeases = (leases: LeasedJob[], until: number) => Promise<string[]>;

/** Renewals per lease: a renewal that is late by up to three quarters of the lease is still in time. */
const RENEWALS_PER_LEASE = 4;

/**
 * The leases of the jobs this worker holds, renewed while it works on them: a claimed job
 * stays ours however long it takes (a stalled SMTP server, a slow API), and a worker that dies
 * leaves its jobs to others after at most one lease. Every quarter of a lease, the jobs held
 * for longer than that get a full lease again, in one fenced statement (the queue's
 * `renew`). A job whose renewal found it taken over is no longer ours (`holds` says so).
 * One timer for all held jobs, running only while some are held: nothing per job.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, { attempts: number; until: number }>();
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly renew: RenewLeases,
    private readonly leaseMs: number,
    private readonly now: () => number,
    private readonly logger: Pick<Logger, 'error'>,
    private readonly name: string,
  ) {}

  /** Jobs just claimed at `claimedAt` (their lease runs from then). */
  hold(jobs: LeasedJob[], claimedAt: number): void {
    for (const job of jobs) this.held.set(job.id, { attempts: job.attempts, until: claimedAt + this.leaseMs });
    if (this.held.size > 0 && !this.timer) {
      this.timer = setInterval(() => void this.renewDue(), Math.max(1, Math.floor(this.leaseMs / RENEWALS_PER_LEASE)));
      // Renewals alone must not keep the process alive.
      this.timer.unref();
    }
  }

  /** The job's outcome is written (or it was given up): no more renewals. */
  release(job: LeasedJob): void {
    this.held.delete(job.id);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * True while the job's lease is ours for at least a quarter lease more: enough for a renewal
   * to come. False once it was taken over, or when renewals failed (database out of reach)
   * and it is about to run out: then another worker may claim it, and running it here too
   * would run it twice.
   */
  holds(job: LeasedJob): boolean {
    const lease = this.held.get(job.id);
    return lease !== undefined && lease.attempts === job.attempts && lease.until - this.now() > this.leaseMs / RENEWALS_PER_LEASE;
  }

  /** No more renewals (the process is stopping): what is still held runs out and is retried. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.held.clear();
    await this.renewing;
  }

  private async renewDue(): Promise<void> {
    if (this.renewing) return;
    const now = this.now();
    const due = [...this.held].filter(([, lease]) => lease.until - now <= this.leaseMs - this.leaseMs / RENEWALS_PER_LEASE);
    if (due.length === 0) return;
    this.renewing = this.extend(due, now)
      .catch((err) => this.logger.error({ err, queue: this.name }, 'renewing leases failed'))
      .finally(() => (this.renewing = undefined));
    await this.renewing;
  }

  private async extend(due: [string, { attempts: number; until: number }][], now: number): Promise<void> {
    const until = now + this.leaseMs;
    const ours = new Set(
      await this.renew(
        due.map(([id, lease]) => ({ id, attempts: lease.attempts })),
        until,
      ),
    );
    for (const [id, lease] of due) {
      // Released meanwhile (its outcome was written): nothing to do.
      if (this.held.get(id) !== lease) continue;
      // Not renewed: taken over by another worker, or its outcome was just written.
      lease.until = ours.has(id) ? until : 0;
    }
  }
}
