import type { Logger } from 'pino';
import { doublingDelays, type RetrySchedule, retryDelay } from './backoff.js';
import { type LeasedJob, LeaseKeeper, type RenewLeases } from './leases.js';

/**
 * A queue as the runner sees it: the database is the queue, and these functions are how one
 * kind of job is claimed, looked ahead for, kept and run. Several processes may run the same
 * queue: a claim is one conditional write, and every outcome write is fenced on the attempt
 * number the claim gave the job.
 */
export interface JobQueue<J extends LeasedJob, B = undefined> {
  /** Names the queue in logs. */
  readonly name: string;
  /** Claims up to `limit` due jobs, leased until `now + leaseMs`. */
  claim(now: number, leaseMs: number, limit: number): Promise<Claim<J>>;
  /** The earliest moment something becomes claimable (a due job, or a lease running out). */
  nextDueAt(): Promise<number | undefined>;
  /**
   * Renews the leases still ours. Without it a claim's lease must outlast its job (the
   * webhook deliveries' lease covers the request's deadline).
   */
  renewLeases?: RenewLeases;
  /** Work shared by a claimed batch, started once before its jobs run (the sends' due-time checks). */
  prepareBatch?(jobs: J[]): B;
  /** Runs one claimed job and writes its outcome; a rejection is only logged (its lease retries it). */
  run(job: J, batch: B): Promise<void>;
}

/** What a claim took, and what it read of the queue behind them if it read that too. */
export interface Claim<J> {
  jobs: J[];
  /**
   * The look-ahead (nextDueAt) as of the claim, read in the same round trip: the earliest
   * moment something left in the queue becomes claimable, null when nothing waits. Left out,
   * the loop asks nextDueAt() when it needs to.
   */
  nextDueAt?: number | null;
}

export interface JobRunnerOptions {
  /** The loop's own failures (a dying loop at fatal when the logger has that level). */
  logger: Pick<Logger, 'error' | 'warn'> & Partial<Pick<Logger, 'fatal'>>;
  /** Clock for claims and leases (tests move it). */
  now?: () => number;
  /** A claimed job belongs to this worker for that long (renewed while it runs, if the queue renews). */
  leaseMs: number;
  /** Jobs in flight at once. */
  concurrency: number;
  /**
   * Claim only once this many slots are free (or none is in flight): under a backlog, claiming
   * per freed slot would mean one claim (a commit) per job. 1: claim whenever a slot is free.
   */
  claimWhenFree?: number;
  /** Longest sleep: bounds how late a job queued by a process that cannot wake this one is seen. */
  idlePollMs: number;
  /**
   * Shortest sleep after a claim that came back short although the look-ahead says something was
   * due when it claimed (another worker's claim holds it for a moment): wait a little rather
   * than spin on it. Something that came due since the claim is claimed at once.
   */
  minRecheckMs?: number;
  /** A claim or look-ahead running longer than this makes the loop 'stalled' (/readyz). */
  stalledAfterMs?: number;
}

/** Failing claims back off 200 ms, 400 ms ... up to the idle poll. */
const CLAIM_BACKOFF: RetrySchedule = { delaysMs: doublingDelays(200, 30_000) };
const DEFAULT_STOP_GRACE_MS = 10_000;

/**
 * The one background loop of Herald's queues (sends, webhook deliveries): claims a batch when
 * slots are free, runs each job with bounded concurrency, keeps the leases of running jobs
 * alive, sleeps until the next due job, a wake-up (notify) or a freed slot, backs off while
 * claims fail, and stops gracefully, waiting for in-flight jobs. Per job it costs a map entry
 * and a promise: no query and no timer of its own.
 */
export class JobRunner<J extends LeasedJob, B = undefined> {
  private readonly inflight = new Set<Promise<void>>();
  private readonly leases: LeaseKeeper | undefined;
  private readonly now: () => number;
  private readonly claimWhenFree: number;
  /** Aborted when stop's grace period runs out: jobs still running should give up. */
  private readonly shutdown = new AbortController();
  private running = false;
  private stopping = false;
  private loopEnded = false;
  private loopDone: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** The current sleep's timer and its end (runner clock); notify(at) can bring the end forward. */
  private sleepTimer: NodeJS.Timeout | undefined;
  private sleepEnd: number | undefined;
  /** Set by notify() while the loop is busy, so the next sleep returns at once. */
  private woken = false;
  /** The earliest notify(at) in the future given while the loop was busy: its next sleep ends by then. */
  private dueHint: number | undefined;
  /** The loop sleeps because no slot was free to claim into: a job that ends wakes it. */
  private waitingForSlot = false;
  /** When the loop's current database step began; undefined while it sleeps (a timer will wake it). */
  private stepStartedAt: number | undefined;

  constructor(
    private readonly queue: JobQueue<J, B>,
    private readonly options: JobRunnerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.claimWhenFree = Math.max(1, options.claimWhenFree ?? 1);
    this.leases = queue.renewLeases && new LeaseKeeper(queue.renewLeases, options.leaseMs, this.now, options.logger, queue.name);
  }

  /** Aborted once stop's grace period is over. */
  get stopSignal(): AbortSignal {
    return this.shutdown.signal;
  }

  start(): void {
    if (this.running || this.stopping) return;
    this.running = true;
    this.loopDone = this.loop()
      .catch((err) => {
        const { logger } = this.options;
        if (logger.fatal) logger.fatal({ err, queue: this.queue.name }, 'job loop stopped');
        else logger.error({ err, queue: this.queue.name }, 'job loop stopped');
      })
      .finally(() => (this.loopEnded = true));
  }

  /** The loop's heartbeat for /readyz: stopped when it is not running, stalled when one step hangs. */
  health(now: number): 'ok' | 'stalled' | 'stopped' {
    if (!this.running || this.loopEnded) return 'stopped';
    const started = this.stepStartedAt;
    return started !== undefined && now - started > (this.options.stalledAfterMs ?? 30_000) ? 'stalled' : 'ok';
  }

  /**
   * Something is claimable at `at` (runner clock; now when not given): look again then rather
   * than at the end of the current sleep. A job that schedules a retry says so too, since a
   * job's end wakes the loop only when it waits for a slot.
   */
  notify(at?: number): void {
    const now = this.now();
    if (at === undefined || at <= now) {
      this.woken = true;
      this.wake?.();
    } else if (this.wake === undefined) {
      this.dueHint = Math.min(this.dueHint ?? at, at);
    } else if (at < this.sleepEnd!) {
      clearTimeout(this.sleepTimer);
      this.sleepEnd = at;
      // +1 ms, as untilNextDue: a timer may fire a hair early by Date.now(), before a claim would see it due.
      this.sleepTimer = setTimeout(this.wake, at - now + 1);
    }
  }

  /**
   * True while the job's lease is ours with time to spare (always, for a queue without
   * renewals): a job about to lose it is left to its retry rather than run twice.
   */
  holdsLease(job: J): boolean {
    return this.leases ? this.leases.holds(job) : true;
  }

  /**
   * Stops claiming and lets in-flight jobs finish, `graceMs` at most; then aborts stopSignal.
   * What is cut off keeps its lease until it runs out and is retried then.
   */
  async stop(graceMs = DEFAULT_STOP_GRACE_MS): Promise<'drained' | 'timeout'> {
    this.stopping = true;
    this.wake?.();
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
    const drained = (async () => {
      await this.loopDone;
      while (this.inflight.size > 0) await Promise.all([...this.inflight]);
      return 'drained' as const;
    })();
    const outcome = await Promise.race([drained, graceOver]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.options.logger.warn(
        { queue: this.queue.name, inFlight: this.inflight.size },
        'job runner stop: grace period over, aborting jobs',
      );
      this.shutdown.abort();
    }
    await this.leases?.stop();
    this.running = false;
    return outcome;
  }

  /** Claims one batch and runs it, waiting for the results (tests and benchmarks); answers how many were claimed. */
  async runOnce(): Promise<number> {
    if (this.shutdown.signal.aborted) return 0;
    const claimed = await this.claim(this.options.concurrency);
    await Promise.all(this.launch(claimed.jobs));
    return claimed.jobs.length;
  }

  /** Claims up to `limit` due jobs and keeps their leases from now on. */
  private async claim(limit: number): Promise<Claim<J> & { at: number }> {
    const now = this.now();
    const claimed = await this.queue.claim(now, this.options.leaseMs, limit);
    this.leases?.hold(claimed.jobs, now);
    return { ...claimed, at: now };
  }

  private async loop(): Promise<void> {
    const { concurrency, idlePollMs } = this.options;
    let failures = 0;
    while (!this.stopping) {
      this.woken = false;
      this.stepStartedAt = Date.now();
      // The loop never waits for a batch to finish: one slow job must not hold up the others.
      const free = concurrency - this.inflight.size;
      const capacity = free >= this.claimWhenFree || this.inflight.size === 0 ? free : 0;
      let claimed = 0;
      let lookAhead: number | null | undefined;
      let claimedAt = 0;
      if (capacity > 0) {
        try {
          const claim = await this.claim(capacity);
          claimed = this.launch(claim.jobs).length;
          lookAhead = claim.nextDueAt;
          claimedAt = claim.at;
          failures = 0;
        } catch (err) {
          failures++;
          this.options.logger.error({ err, queue: this.queue.name }, 'claiming jobs failed');
          await this.sleep(Math.min(idlePollMs, retryDelay(CLAIM_BACKOFF, failures)));
          continue;
        }
      }
      if (this.stopping) break;
      // A full batch means more may be due: go again at once.
      if (capacity > 0 && claimed === capacity) continue;
      // Claimed fewer than it could: nothing more is due before the look-ahead says, and a job
      // that ends changes none of that (a retry it schedules calls notify). Only a loop that
      // had no slot to claim into waits for a job to end.
      if (capacity > 0) await this.sleep(await this.untilNextDue(claimedAt, lookAhead));
      else await this.sleep(idlePollMs, { forSlot: true });
    }
  }

  /**
   * How long to sleep until the next job is due, the idle poll at most, after a short claim made
   * at `claimedAt`; `lookAhead`: the one the claim read, if it did.
   */
  private async untilNextDue(claimedAt: number, lookAhead: number | null | undefined): Promise<number> {
    const { idlePollMs, minRecheckMs = 0 } = this.options;
    try {
      const next = lookAhead === undefined ? await this.queue.nextDueAt() : (lookAhead ?? undefined);
      if (next === undefined) return idlePollMs;
      if (next <= claimedAt) return Math.min(idlePollMs, minRecheckMs);
      // +1 ms: claims compare due times <= now, so never wake a hair early.
      return Math.min(idlePollMs, Math.max(next - this.now() + 1, 0));
    } catch (err) {
      this.options.logger.error({ err, queue: this.queue.name }, 'reading the next due job failed');
      return idlePollMs;
    }
  }

  /**
   * Sleeps `ms` (ended sooner by a notify(at) given meanwhile), or until a notify() now, or,
   * `forSlot`, until a job ends.
   */
  private async sleep(ms: number, { forSlot = false } = {}): Promise<void> {
    if (this.dueHint !== undefined) {
      ms = Math.min(ms, this.dueHint - this.now() + 1);
      this.dueHint = undefined;
    }
    if (ms <= 0 || this.stopping || this.woken) return;
    this.stepStartedAt = undefined;
    this.waitingForSlot = forSlot;
    await new Promise<void>((resolve) => {
      this.wake = () => {
        clearTimeout(this.sleepTimer);
        this.wake = undefined;
        this.sleepEnd = undefined;
        this.waitingForSlot = false;
        resolve();
      };
      this.sleepEnd = this.now() + ms;
      this.sleepTimer = setTimeout(this.wake, ms);
    });
  }

  /** Starts a claimed batch's jobs, counted in flight; the returned promises never reject. */
  private launch(claimed: J[]): Promise<void>[] {
    if (claimed.length === 0) return [];
    const batch = this.queue.prepareBatch ? this.queue.prepareBatch(claimed) : (undefined as B);
    return claimed.map((job) => {
      const work: Promise<void> = this.queue
        .run(job, batch)
        .catch((err: unknown) => this.options.logger.error({ err, queue: this.queue.name, jobId: job.id }, 'job failed'))
        .finally(() => {
          this.leases?.release(job);
          this.inflight.delete(work);
          // A slot opened: the loop may have been waiting for one.
          if (this.waitingForSlot) this.wake?.();
        });
      this.inflight.add(work);
      return work;
    });
  }
}
