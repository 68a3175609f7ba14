import type { Logger } from 'pino';
import { DeliveryError, type DeliveryReceipt, type Transport } from '../channels/channel.js';
import { CHANNEL_REGISTRY } from '../channels/registry.js';
import type { Config } from '../config.js';
import type { Channel } from '../contract/constants.js';
import type { Db } from '../db/connect.js';
import type { Tx } from '../db/transaction.js';
import { doublingDelays, retryAt as nextTryAt, type RetrySchedule, retryDelay } from '../jobs/backoff.js';
import { type Claim, JobRunner } from '../jobs/runner.js';
import type { Campaign } from '../modules/campaigns/campaign.js';
import type { ContactProfile } from '../modules/contacts/contacts.service.js';
import type { SendOutcome } from '../ops/metrics.js';
import { recordBounce } from './bounces.js';
import { type ClaimedSend, finishUndelivered, finishUndeliveredMany, nextDueAt, renewSendLeases, requeue } from './dispatch.repo.js';
import { claimBatch } from './dispatch-claim.js';
import { type DueData, type Verdict, verdictsOf } from './due-checks.js';
import { OutcomeBatch } from './outcome-batch.js';

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
  sentInTx?: (sent: {
    send: ClaimedSend;
    campaign: Campaign;
    contact: ContactProfile;
    now: number;
  }) => ((tx: Tx) => Promise<void>) | undefined;
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

/** Tries of a delivered send's outcome write: 5, with 100 ms doubling between them (1.5 s in all). */
const OUTCOME_WRITE_RETRY = { delaysMs: doublingDelays(100, 800), maxAttempts: 5 } satisfies RetrySchedule;

/** A send's retry schedule after temporary failures: 5 s, 10 s, 20 s ... capped at 30 min, ±20%. */
export const SEND_RETRY: RetrySchedule = { delaysMs: doublingDelays(5_000, 30 * 60_000), jitter: 0.2 };

/** The PostgreSQL channel that wakes worker processes when a send is queued (jobs/wakeup.ts). */
export const SENDS_WAKEUP_CHANNEL = 'herald_sends';

/** A batch's verdicts, and the write that ends the sends its checks stopped (one for all of them). */
type DueChecks = { verdicts: Map<string, Verdict>; now: number; ended: Promise<void>; deliveredBefore: Map<string, DeliveredSend> };

/**
 * A delivered send: what its outcome is written from. The campaign and contact are those its
 * checks read; one found delivered before in its transport's journal may have lost them since.
 */
interface DeliveredSend {
  campaign: Campaign | undefined;
  contact: ContactProfile | undefined;
  to: string;
  receipt: DeliveryReceipt;
}

/**
 * Claims due sends from the database and delivers them. The database is the queue: this
 * process keeps no state another process needs, so several dispatchers can share one
 * PostgreSQL. Network calls happen outside any transaction; outcomes are fenced writes.
 * The loop (claims, leases, wake-ups, stop) is the job runner's (jobs/runner.ts); this is the
 * sends queue on it.
 */
export class Dispatcher {
  private readonly runner: JobRunner<ClaimedSend, DueChecks>;
  private readonly retry: RetrySchedule;
  private readonly now: () => number;
  private readonly outcomes: OutcomeBatch;
  /** What a batch's claim read with it (dispatch-claim.ts), until its checks take it. */
  private readonly claimedData = new WeakMap<ClaimedSend[], DueData>();

  constructor(private readonly options: DispatcherOptions) {
    const { db } = options;
    this.outcomes = new OutcomeBatch(db);
    const concurrency = options.concurrency ?? 32;
    this.retry = { ...SEND_RETRY, maxAttempts: options.maxAttempts ?? 10 };
    this.now = options.now ?? Date.now;
    this.runner = new JobRunner<ClaimedSend, DueChecks>(
      {
        name: 'sends',
        claim: (now, leaseMs, limit) => this.claim(now, leaseMs, limit),
        nextDueAt: () => nextDueAt(db),
        renewLeases: (leases, until) => renewSendLeases(db, leases, until),
        prepareBatch: (claimed) => this.checkBatch(claimed),
        run: (send, checks) => this.deliverAndRecord(send, checks),
      },
      {
        logger: options.logger,
        now: this.now,
        leaseMs: options.leaseMs ?? 120_000,
        concurrency,
        // Each claim is a write (a commit). Under a backlog every finished send frees one slot, and
        // claiming per slot would mean one claim per send: wait for a quarter of the slots instead.
        // With few sends in flight (the usual case) the claim happens at once.
        claimWhenFree: Math.floor(concurrency / 4),
        idlePollMs: options.idlePollMs ?? 5_000,
        // A short claim whose look-ahead says something was due when it claimed left sends that
        // another worker's claim holds (SKIP LOCKED: they are that worker's), or due sends behind
        // restarted ones it re-armed at the queue's front (rare: found 10 ms later). New sends
        // wake this loop (notify) anyway.
        minRecheckMs: 10,
        stalledAfterMs: options.stalledAfterMs,
      },
    );
  }

  start(): void {
    this.runner.start();
  }

  /** The loop's heartbeat for /readyz: stopped when it is not running, stalled when one step hangs. */
  health(now: number): 'ok' | 'stalled' | 'stopped' {
    return this.runner.health(now);
  }

  /**
   * Something is due at dueAt (now when not given): look again then rather than at the end of
   * the idle sleep. A send queued with a short delay wakes the loop when it is due, not at once
   * for a claim that finds nothing.
   */
  notify(dueAt?: number): void {
    this.runner.notify(dueAt);
  }

  /**
   * Stops claiming, lets in-flight sends finish (up to graceMs), and returns. Sends still in
   * flight past the grace period keep their leases until those run out.
   */
  async stop(graceMs = 10_000): Promise<void> {
    await this.runner.stop(graceMs);
  }

  /** Claims one batch and delivers it, waiting for the results (tests and benchmarks). */
  runOnce(): Promise<number> {
    return this.runner.runOnce();
  }

  /** The claim reads what the batch's checks and rendering need with it (dispatch-claim.ts), kept for checkBatch. */
  private async claim(now: number, leaseMs: number, limit: number): Promise<Claim<ClaimedSend>> {
    const { sends, data, nextDueAt } = await claimBatch(this.options.db, now, leaseMs, limit);
    if (sends.length > 0) this.claimedData.set(sends, data);
    return { jobs: sends, nextDueAt };
  }

  /**
   * A claimed batch: the due-time checks of all its sends from the data its claim read, and the
   * sends they stop ended in one write, before each other send goes on its own (delivery and
   * its fenced outcome).
   */
  private checkBatch(claimed: ClaimedSend[]): DueChecks {
    const { db } = this.options;
    const now = this.now();
    const data = this.claimedData.get(claimed)!;
    this.claimedData.delete(claimed);
    const verdicts = verdictsOf(claimed, data, now);
    const deliveredBefore = this.deliveredBefore(claimed, data);
    const stopped: Parameters<typeof finishUndeliveredMany>[1] = [];
    for (const send of claimed) {
      const verdict = verdicts.get(send.id)!;
      if ('end' in verdict && !deliveredBefore.has(send.id)) stopped.push({ send, status: verdict.end, reason: verdict.reason });
    }
    const ended = finishUndeliveredMany(db, stopped, now);
    // Each stopped send fails with it (its lease retries it), in readyAtDueTime().
    ended.catch(() => undefined);
    return { verdicts, now, ended, deliveredBefore };
  }

  /**
   * The sends of a batch claimed before (attempts > 1) whose message their transport's journal
   * says went out: a crash came between the server's acceptance and the outcome's write. They
   * are recorded sent, whatever the checks say now (the message is out), and not sent again.
   * A journal that cannot be read counts as empty: the send goes out again, as without one.
   */
  private deliveredBefore(claimed: ClaimedSend[], data: DueData): Map<string, DeliveredSend> {
    const found = new Map<string, DeliveredSend>();
    const again = claimed.filter((send) => send.attempts > 1);
    for (const channel of new Set(again.map((send) => send.channel))) {
      const journal = this.options.channels[channel].deliveredBefore;
      if (!journal) continue;
      const sends = again.filter((send) => send.channel === channel);
      let receipts: ReturnType<typeof journal>;
      try {
        receipts = journal(sends.map((send) => send.id));
      } catch (err) {
        this.options.logger.error({ err, channel }, 'reading the acceptance journal failed: its sends go out again');
        continue;
      }
      for (const send of sends) {
        const receipt = receipts.get(send.id);
        if (!receipt) continue;
        const { to, ...rest } = receipt;
        found.set(send.id, {
          campaign: data.campaigns.get(send.campaign_id),
          contact: data.contacts.get(send.contact_id),
          to,
          receipt: rest,
        });
      }
    }
    return found;
  }

  /** One claimed send: its due-time verdict, delivery, and its fenced outcome. Never throws. */
  private async deliverAndRecord(send: ClaimedSend, checks: DueChecks): Promise<void> {
    const { db, logger } = this.options;
    const before = checks.deliveredBefore.get(send.id);
    if (before) {
      logger.warn({ sendId: send.id }, 'send accepted by the server before a crash: recorded sent, not sent again');
      await this.recordDelivered(send, before);
      return;
    }
    let delivered: { campaign: Campaign; contact: ContactProfile; to: string; receipt: DeliveryReceipt };
    let to: string | undefined;
    try {
      const ready = await this.readyAtDueTime(send, checks);
      if (!ready) return;
      const { campaign, contact } = ready;
      to = ready.to;
      const { deliveryAccount } = CHANNEL_REGISTRY[campaign.channel];
      const whatsapp = deliveryAccount ? await deliveryAccount(db, this.options.config, send.account_id) : null;
      const channel = this.options.channels[campaign.channel];
      // The lease could not be renewed (database out of reach) or was taken over: another
      // worker may be sending this one, so leave it to them rather than send it twice.
      if (!this.runner.holdsLease(send)) {
        logger.warn({ sendId: send.id }, 'send lease about to run out before delivery: left for a retry');
        return;
      }
      const receipt = await channel.deliver({
        send: {
          id: send.id,
          accountId: send.account_id,
          campaignId: send.campaign_id,
          contactId: send.contact_id,
          attempts: send.attempts,
          test: send.test,
        },
        campaign,
        contact,
        to,
        account: { id: send.account_id, whatsapp },
        trigger: send.triggerData,
      });
      delivered = { campaign, contact, to, receipt };
    } catch (err) {
      await this.fail(send, err, to).catch((writeErr) =>
        logger.error({ err: writeErr, sendId: send.id }, 'recording a send failure failed'),
      );
      return;
    }
    await this.recordDelivered(send, delivered);
  }

  /**
   * The message is out: its outcome is written at once, as a priority write. A failed
   * write is tried again (a dropped connection is replaced), never turned into a retry of the
   * delivery; if it keeps failing, the lease runs out and the send goes out again (at least once).
   */
  private async recordDelivered(send: ClaimedSend, { campaign, contact, to, receipt }: DeliveredSend): Promise<void> {
    const { logger } = this.options;
    const now = this.now();
    // A test send reaches the tester, not the customer's systems: no webhooks for it. Nor
    // does a send delivered before a crash whose contact is gone since (erased).
    const alsoInTx = send.test || !campaign || !contact ? undefined : this.options.sentInTx?.({ send, campaign, contact, now });
    for (let attempt = 1; ; attempt++) {
      try {
        // Outcomes finished together share one write, webhooks queued in it (outcome-batch.ts).
        const recorded = await this.outcomes.record(send, { to, ...receipt }, now, alsoInTx);
        this.options.metrics?.sendFinished(send.channel, recorded ? 'sent' : 'lease_lost', now - send.due_at);
        if (recorded) {
          this.options.channels[send.channel].recorded?.(send.id);
          if (campaign) this.options.afterSent?.({ send, campaign });
        } else {
          // Another claim took it over: the journal keeps the entry for that claim.
          logger.warn({ sendId: send.id }, 'send delivered after its lease was taken over');
        }
        return;
      } catch (err) {
        if (attempt >= OUTCOME_WRITE_RETRY.maxAttempts) {
          logger.error({ err, sendId: send.id }, 'recording a delivered send failed: it will be sent again when its lease runs out');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, retryDelay(OUTCOME_WRITE_RETRY, attempt)));
      }
    }
  }

  /**
   * The send's verdict from its batch's due-time checks (due-checks.ts); a send that does not
   * go out is ended here. Undefined when it does not go out.
   */
  private async readyAtDueTime(send: ClaimedSend, checks: DueChecks) {
    const { verdicts, ended } = checks;
    const verdict = verdicts.get(send.id)!;
    if ('end' in verdict) {
      await ended;
      this.options.metrics?.sendFinished(send.channel, verdict.end);
      return undefined;
    }
    return verdict;
  }

  /** `to`: the address the delivery went to, when it got that far. */
  private async fail(send: ClaimedSend, err: unknown, to: string | undefined): Promise<void> {
    const now = this.now();
    const temporary = !(err instanceof DeliveryError) || err.temporary;
    const reason = err instanceof Error ? err.message : String(err);
    if (!(err instanceof DeliveryError)) this.options.logger.error({ err, sendId: send.id }, 'send failed unexpectedly');
    if (err instanceof DeliveryError && err.addressRefused && to !== undefined) {
      await recordBounce(this.options.db, send, reason, to, now);
      this.options.metrics?.sendFinished(send.channel, 'error');
      return;
    }
    const retryAt = temporary ? nextTryAt(this.retry, send.attempts, now) : null;
    if (retryAt !== null) {
      await requeue(this.options.db, send, reason, retryAt, now);
      this.runner.notify(retryAt);
      this.options.metrics?.sendFinished(send.channel, 'retry');
    } else {
      await finishUndelivered(
        this.options.db,
        send,
        'error',
        temporary ? `gave up after ${send.attempts} attempts: ${reason}` : reason,
        now,
      );
      this.options.metrics?.sendFinished(send.channel, 'error');
    }
  }
}
