import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Tx } from '../db/transaction.js';
import { DeliveryError, type DeliveryReceipt, type Transport } from '../channels/channel.js';
import { CHANNEL_REGISTRY } from '../channels/registry.js';
import type { Channel } from '../contract/constants.js';
import type { Campaign } from '../modules/campaigns/campaign.js';
import type { ContactProfile } from '../modules/contacts/contacts.service.js';
import { claimDueSends, nextDueAt, type ClaimedSend } from './claim.js';
import { checkAtDueTime, type Verdict } from './due-checks.js';
import { LeaseKeeper } from './leases.js';
import { finishUndelivered, recordSent, requeue } from './outcome.js';
import type { SendOutcome } from '../ops/metrics.js';

export interface DispatcherOptions {
  db: Db;
  config: Pick<Config, 'secret'>;
  logger: Logger;
  /** One transport per channel (channels/transports.ts). */
  channels: Readonly<Record<Channel, Transport>>;
  /**
   * The work to do inside the transaction that marks a send sent (queueing its webhooks), or
   * undefined when there is none: then the outcome is a single statement (one round trip).
   */
  sentInTx?: (sent: { send: ClaimedSend; campaign: Campaign; contact: ContactProfile; now: number }) => ((tx: Tx) => Promise<void>) | undefined;
  /** Runs after that transaction committed (wakes the webhook worker). */
  afterSent?: (sent: { send: ClaimedSend; campaign: Campaign }) => void;
  /**
   * A claimed send belongs to this worker for that long, renewed while the worker works on it;
   * a worker that dies leaves its sends to be retried once that time has passed.
   */
  leaseMs?: number;
  /** How many sends are in flight at once. */
  concurrency?: number;
  /** Longest idle sleep: short when wake-ups cannot reach this process (SQLite, separate worker). */
  idlePollMs?: number;
  /** Temporary failures are retried this many times in all, then the send ends in error. */
  maxAttempts?: number;
  now?: () => number;
  /** Counts outcomes and due-to-delivered lag for /metrics. */
  metrics?: { sendFinished(channel: string, outcome: SendOutcome, lagMs?: number): void };
  /** A claim or look-ahead query running longer than this makes the loop 'stalled' (/readyz). */
  stalledAfterMs?: number;
}

const RETRY_BASE_MS = 5_000;
const RETRY_CAP_MS = 30 * 60_000;
/** Tries of a delivered send's outcome write (100 ms doubling between them, 1.5 s in all). */
const OUTCOME_WRITE_ATTEMPTS = 5;

/** Exponential backoff with jitter: 5 s, 10 s, 20 s ... capped at 30 min. */
export function retryDelay(attempts: number): number {
  const base = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * Claims due sends from the database and delivers them. The database is the queue: this
 * process keeps no state another process needs, so several dispatchers can share one
 * PostgreSQL. Network calls happen outside any transaction; outcomes are fenced writes.
 */
export class Dispatcher {
  private readonly inflight = new Set<Promise<void>>();
  private running = false;
  private loopEnded = false;
  private stopping = false;
  private loopDone: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Set by notify() or a freed slot while the loop is busy, so the next sleep returns at once. */
  private woken = false;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly idlePollMs: number;
  private readonly maxAttempts: number;
  private readonly now: () => number;
  private readonly leases: LeaseKeeper;
  /** When the loop's current database step began; undefined while it sleeps (a timer will wake it). */
  private stepStartedAt: number | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.leaseMs = options.leaseMs ?? 120_000;
    this.concurrency = options.concurrency ?? 32;
    this.idlePollMs = options.idlePollMs ?? 5_000;
    this.maxAttempts = options.maxAttempts ?? 10;
    this.now = options.now ?? Date.now;
    this.leases = new LeaseKeeper(options.db, this.leaseMs, this.now, options.logger);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop()
      .catch((err) => this.options.logger.fatal({ err }, 'dispatcher loop stopped'))
      .finally(() => (this.loopEnded = true));
  }

  /** The loop's heartbeat for /readyz: stopped when it is not running, stalled when one step hangs. */
  health(now: number): 'ok' | 'stalled' | 'stopped' {
    if (!this.running || this.loopEnded) return 'stopped';
    const started = this.stepStartedAt;
    return started !== undefined && now - started > (this.options.stalledAfterMs ?? 30_000) ? 'stalled' : 'ok';
  }

  /** Something is due (at dueAt): look again now rather than at the end of the idle sleep. */
  notify(_dueAt?: number): void {
    this.woken = true;
    this.wake?.();
  }

  /** Stops claiming, lets in-flight sends finish (up to graceMs), and returns. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await Promise.race([Promise.all([this.loopDone, ...this.inflight]), new Promise((r) => setTimeout(r, graceMs).unref())]);
    // Sends still in flight past the grace period keep their leases until those run out.
    await this.leases.stop();
    this.running = false;
  }

  /** Claims one batch and delivers it, waiting for the results (tests and benchmarks). */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(this.concurrency);
    await Promise.all(this.processBatch(claimed));
    return claimed.length;
  }

  /** Claims up to `limit` due sends and keeps their leases from now on. */
  private async claim(limit: number): Promise<ClaimedSend[]> {
    const now = this.now();
    const claimed = await claimDueSends(this.options.db, now, this.leaseMs, limit);
    this.leases.hold(claimed, now);
    return claimed;
  }

  private async loop(): Promise<void> {
    // Each claim is a write (a commit). Under a backlog every finished send frees one slot, and
    // claiming per slot would mean one claim per send: wait for a quarter of the slots instead.
    // With few sends in flight (the usual case) the claim happens at once.
    const claimBatch = Math.max(1, Math.floor(this.concurrency / 4));
    while (!this.stopping) {
      this.woken = false;
      this.stepStartedAt = Date.now();
      const free = this.concurrency - this.inflight.size;
      const capacity = free >= claimBatch || this.inflight.size === 0 ? free : 0;
      let claimed: ClaimedSend[] = [];
      if (capacity > 0) {
        try {
          claimed = await this.claim(capacity);
        } catch (err) {
          this.options.logger.error({ err }, 'claiming sends failed');
        }
        for (const work of this.processBatch(claimed)) this.track(work);
      }
      if (this.stopping) break;
      // A full batch means more may be due: go again at once.
      if (capacity > 0 && claimed.length === capacity) continue;
      await this.sleep(capacity > 0);
    }
  }

  private track(work: Promise<void>): void {
    this.inflight.add(work);
    void work.finally(() => {
      this.inflight.delete(work);
      // A slot opened: the loop may have been waiting for one.
      this.woken = true;
      this.wake?.();
    });
  }

  /** Sleeps until the next due send, a notify(), a freed slot, or the idle poll, whichever comes first. */
  private async sleep(lookAhead: boolean): Promise<void> {
    let wait = this.idlePollMs;
    if (lookAhead) {
      try {
        const next = await nextDueAt(this.options.db);
        // +1 ms: the claim compares due_at <= now, so never wake a hair early.
        if (next !== undefined) wait = Math.min(wait, Math.max(0, next - this.now() + 1));
      } catch (err) {
        this.options.logger.error({ err }, 'reading the next due send failed');
      }
    }
    if (wait === 0 || this.stopping || this.woken) return;
    this.stepStartedAt = undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, wait);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = undefined;
  }

  /**
   * A claimed batch: the due-time checks of all its sends in one read, then each send on its
   * own (delivery and its fenced outcome). The returned promises never reject.
   */
  private processBatch(claimed: ClaimedSend[]): Promise<void>[] {
    if (claimed.length === 0) return [];
    const now = this.now();
    const checks = checkAtDueTime(this.options.db, claimed, now).then((verdicts) => ({ verdicts, now }));
    // A failed read fails each send of the batch (a temporary failure, retried), in process().
    checks.catch(() => undefined);
    return claimed.map((send) => this.process(send, checks));
  }

  /** One claimed send: its due-time verdict, delivery, and its fenced outcome. Never throws. */
  private async process(send: ClaimedSend, checks: Promise<{ verdicts: Map<string, Verdict>; now: number }>): Promise<void> {
    try {
      await this.deliverAndRecord(send, checks);
    } finally {
      this.leases.release(send);
    }
  }

  private async deliverAndRecord(send: ClaimedSend, checks: Promise<{ verdicts: Map<string, Verdict>; now: number }>): Promise<void> {
    const { db, logger } = this.options;
    let delivered: { campaign: Campaign; contact: ContactProfile; to: string; receipt: DeliveryReceipt };
    try {
      const ready = await this.readyAtDueTime(send, checks);
      if (!ready) return;
      const { campaign, contact, to } = ready;
      const { deliveryAccount } = CHANNEL_REGISTRY[campaign.channel];
      const whatsapp = deliveryAccount ? await deliveryAccount(db, this.options.config, send.account_id) : null;
      const channel = this.options.channels[campaign.channel];
      // The lease could not be renewed (database out of reach) or was taken over: another
      // worker may be sending this one, so leave it to them rather than send it twice.
      if (!this.leases.holds(send)) {
        logger.warn({ sendId: send.id }, 'send lease about to run out before delivery: left for a retry');
        return;
      }
      const receipt = await channel.deliver({
        send: { id: send.id, accountId: send.account_id, campaignId: send.campaign_id, contactId: send.contact_id, attempts: send.attempts },
        campaign,
        contact,
        to,
        account: { id: send.account_id, whatsapp },
      });
      delivered = { campaign, contact, to, receipt };
    } catch (err) {
      await this.fail(send, err).catch((writeErr) => logger.error({ err: writeErr, sendId: send.id }, 'recording a send failure failed'));
      return;
    }
    await this.recordDelivered(send, delivered);
  }

  /**
   * The message is out: its outcome is written at once, as a priority write. A failed
   * write is tried again (a dropped connection is replaced), never turned into a retry of the
   * delivery; if it keeps failing, the lease runs out and the send goes out again (at least once).
   */
  private async recordDelivered(send: ClaimedSend, { campaign, contact, to, receipt }: { campaign: Campaign; contact: ContactProfile; to: string; receipt: DeliveryReceipt }): Promise<void> {
    const { db, logger } = this.options;
    const now = this.now();
    // A test send reaches the tester, not the customer's systems: no webhooks for it.
    const alsoInTx = send.test ? undefined : this.options.sentInTx?.({ send, campaign, contact, now });
    for (let attempt = 1; ; attempt++) {
      try {
        const recorded = await recordSent(db, send, { to, ...receipt }, now, alsoInTx);
        this.options.metrics?.sendFinished(send.channel, recorded ? 'sent' : 'lease_lost', now - send.due_at);
        if (recorded) this.options.afterSent?.({ send, campaign });
        else logger.warn({ sendId: send.id }, 'send delivered after its lease was taken over');
        return;
      } catch (err) {
        if (attempt >= OUTCOME_WRITE_ATTEMPTS) {
          logger.error({ err, sendId: send.id }, 'recording a delivered send failed: it will be sent again when its lease runs out');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      }
    }
  }

  /**
   * The send's verdict from its batch's due-time checks (due-checks.ts); a send that does not
   * go out is ended here. Undefined when it does not go out.
   */
  private async readyAtDueTime(send: ClaimedSend, checks: Promise<{ verdicts: Map<string, Verdict>; now: number }>) {
    const { verdicts, now } = await checks;
    const verdict = verdicts.get(send.id)!;
    if ('end' in verdict) {
      await finishUndelivered(this.options.db, send, verdict.end, verdict.reason, now);
      this.options.metrics?.sendFinished(send.channel, verdict.end);
      return undefined;
    }
    return verdict;
  }

  private async fail(send: ClaimedSend, err: unknown): Promise<void> {
    const now = this.now();
    const temporary = !(err instanceof DeliveryError) || err.temporary;
    const reason = err instanceof Error ? err.message : String(err);
    if (!(err instanceof DeliveryError)) this.options.logger.error({ err, sendId: send.id }, 'send failed unexpectedly');
    if (temporary && send.attempts < this.maxAttempts) {
      await requeue(this.options.db, send, reason, now + retryDelay(send.attempts), now);
      this.options.metrics?.sendFinished(send.channel, 'retry');
    } else {
      await finishUndelivered(this.options.db, send, 'error', temporary ? `gave up after ${send.attempts} attempts: ${reason}` : reason, now);
      this.options.metrics?.sendFinished(send.channel, 'error');
    }
  }
}
