import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { openWebhookSecret } from '../modules/campaigns/webhook-secret.js';
import { claimDue, nextWakeAt, recordAttempt, sealedSecretOf, type ClaimedDelivery } from './deliveries.repo.js';
import { webhookMessageId } from './enqueue.js';
import { postWebhook, type PostOutcome } from './http-post.js';

export type WebhookWorkerLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

export interface WebhookWorkerOptions {
  db: Db;
  config: Pick<Config, 'secret' | 'webhookAllowPrivate'>;
  logger: WebhookWorkerLogger;
  /** Clock for due times, leases, attempt times and the signed timestamp (tests move it). */
  now?: () => number;
  /** Deadline of one attempt; decisions.md says 10 s. */
  fetchTimeoutMs?: number;
  /** Deliveries in flight at once in the background loop (runOnce claims at most this many). */
  concurrency?: number;
  /**
   * Longest idle sleep (default 2 s): bounds how late a row enqueued by another process, which
   * cannot notify() this one, is noticed.
   */
  idleMaxMs?: number;
  /** Counts attempt results for /metrics. */
  metrics?: { webhookAttempt(outcome: string): void };
}

const STOP_GRACE_MS = 10_000;
const MIN_RECHECK_MS = 50;
/** Room for the database writes after the request's own deadline, before another worker may step in. */
const LEASE_MARGIN_MS = 50_000;
const USER_AGENT = 'Herald-Webhooks/1';

/**
 * Delivers queued webhook deliveries: claims due rows (several workers, even on several
 * machines, share them through the database), POSTs each signed body outside any transaction,
 * and records every attempt. A worker that dies leaves its rows to whoever claims them after
 * the lease: delivery is at least once, and receivers deduplicate on `webhook-id`.
 */
export class WebhookWorker {
  private readonly db: Db;
  private readonly config: WebhookWorkerOptions['config'];
  private readonly logger: WebhookWorkerLogger;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly idleMaxMs: number;
  private readonly metrics: WebhookWorkerOptions['metrics'];
  private readonly inFlight = new Set<Promise<void>>();
  /** Aborts in-flight requests when stop's grace period runs out. */
  private readonly shutdown = new AbortController();
  private running = false;
  private loop: Promise<void> | undefined;
  /** Set by notify() and by a finished delivery; a sleep that starts after it returns at once. */
  private woken = false;
  private wakeSleeper: (() => void) | undefined;

  constructor(options: WebhookWorkerOptions) {
    this.db = options.db;
    this.config = options.config;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.fetchTimeoutMs ?? 10_000;
    this.concurrency = options.concurrency ?? 32;
    this.leaseMs = this.timeoutMs + LEASE_MARGIN_MS;
    this.idleMaxMs = options.idleMaxMs ?? 2_000;
    this.metrics = options.metrics;
  }

  start(): void {
    if (this.running || this.shutdown.signal.aborted) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Something was enqueued: look now instead of at the end of the current sleep. */
  notify(): void {
    this.woken = true;
    this.wakeSleeper?.();
  }

  /** Stops claiming and lets in-flight deliveries finish, 10 s at most; what is cut off is retried after its lease. */
  async stop(): Promise<void> {
    this.running = false;
    this.notify();
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), STOP_GRACE_MS)));
    const drained = (async () => {
      await this.loop;
      while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
      return 'drained' as const;
    })();
    const outcome = await Promise.race([drained, graceOver]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.logger.warn({ inFlight: this.inFlight.size }, 'webhook worker stop: grace period over, aborting deliveries');
      this.shutdown.abort();
    }
  }

  /** Claims one batch of due deliveries and delivers them; resolves with how many were claimed. */
  async runOnce(): Promise<number> {
    if (this.shutdown.signal.aborted) return 0;
    const rows = await claimDue(this.db, this.now(), this.leaseMs, this.concurrency);
    await Promise.all(rows.map((row) => this.track(row)));
    return rows.length;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.woken = false;
      try {
        // The loop does not wait for a batch: one slow receiver must not hold up the others.
        const free = this.concurrency - this.inFlight.size;
        const rows = free > 0 ? await claimDue(this.db, this.now(), this.leaseMs, free) : [];
        for (const row of rows) void this.track(row);
        failures = 0;
        if (free > 0 && rows.length === free) continue; // more may be due
        const next = free > 0 ? await nextWakeAt(this.db) : null;
        // A due row that could not be claimed is held by another worker's claim for a moment:
        // wait a little rather than spin on it.
        await this.sleep(next === null ? this.idleMaxMs : Math.max(next - this.now(), rows.length === 0 ? MIN_RECHECK_MS : 0));
      } catch (err) {
        failures++;
        this.logger.error({ err }, 'webhook worker: claiming failed');
        await this.sleep(Math.min(this.idleMaxMs, 100 * 2 ** failures));
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    const wait = Math.min(Math.max(ms, 0), this.idleMaxMs);
    if (wait === 0 || this.woken || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.wakeSleeper = done;
    });
  }

  /** Runs one delivery, counted in flight; a failure to record is logged, and the lease retries the row. */
  private track(row: ClaimedDelivery): Promise<void> {
    const job = this.deliver(row)
      .catch((err: unknown) => this.logger.error({ err, deliveryId: row.id }, 'webhook delivery: recording the attempt failed'))
      .finally(() => {
        this.inFlight.delete(job);
        this.notify();
      });
    this.inFlight.add(job);
    return job;
  }

  private async deliver(row: ClaimedDelivery): Promise<void> {
    const attemptedAt = this.now();
    const started = performance.now();
    const outcome = await this.attempt(row, attemptedAt);
    // Cut off by shutdown: record nothing; the row stays leased and is retried after the lease.
    if (this.shutdown.signal.aborted) return;
    const result = await recordAttempt(this.db, row, {
      attemptedAt,
      finishedAt: this.now(),
      durationMs: Math.round(performance.now() - started),
      statusCode: outcome.statusCode,
      error: outcome.error,
    });
    this.metrics?.webhookAttempt(result);
    // The URL is left out: its query may carry the receiver's token.
    const fields = { deliveryId: row.id, campaignId: row.campaign_id, attempt: row.attempts, statusCode: outcome.statusCode, error: outcome.error, result };
    if (result === 'delivered') this.logger.debug(fields, 'webhook delivered');
    else if (result === 'failed') this.logger.warn(fields, 'webhook delivery failed for good');
    else this.logger.info(fields, 'webhook attempt failed');
  }

  private async attempt(row: ClaimedDelivery, at: number): Promise<PostOutcome> {
    const sealed = await sealedSecretOf(this.db, row.account_id, row.campaign_id);
    if (sealed === undefined) return { statusCode: null, error: 'campaign not found: cannot sign' };
    const msgId = webhookMessageId(row.id);
    const timestamp = new Date(at);
    let signature: string;
    try {
      signature = new Webhook(openWebhookSecret(this.config, sealed)).sign(msgId, timestamp, row.payload);
    } catch {
      // HERALD_SECRET changed since the campaign was saved: logged as an attempt, never with the secret.
      return { statusCode: null, error: "cannot open the campaign's signing secret" };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': msgId,
      // The library signs whole seconds; the header must carry the same value.
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    };
    return postWebhook(row.url, row.payload, headers, {
      allowPrivate: this.config.webhookAllowPrivate,
      timeoutMs: this.timeoutMs,
      signal: this.shutdown.signal,
    });
  }
}
