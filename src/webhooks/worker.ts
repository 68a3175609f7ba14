import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { retryAt } from '../jobs/backoff.js';
import { JobRunner } from '../jobs/runner.js';
import { findSealedWebhookSecret } from '../modules/campaigns/campaigns.service.js';
import { openWebhookSecret } from '../modules/campaigns/webhook-secret.js';
import { WEBHOOK_RETRY } from './backoff.js';
import { type ClaimedDelivery, claimDue, nextWakeAt, recordAttempt } from './deliveries.repo.js';
import { webhookMessageId } from './enqueue.js';
import { type PostOutcome, postWebhook } from './http-post.js';

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

/** A due row that could not be claimed is held by another worker's claim for a moment: look again this soon. */
const MIN_RECHECK_MS = 50;
/** Room for the database writes after the request's own deadline, before another worker may step in. */
const LEASE_MARGIN_MS = 50_000;
const USER_AGENT = 'Herald-Webhooks/1';

/**
 * Delivers queued webhook deliveries: claims due rows (several workers, even on several
 * machines, share them through the database), POSTs each signed body outside any transaction,
 * and records every attempt. A worker that dies leaves its rows to whoever claims them after
 * the lease: delivery is at least once, and receivers deduplicate on `webhook-id`. The loop
 * is the job runner's (jobs/runner.ts); the lease is not renewed, it outlasts the request's
 * deadline.
 */
export class WebhookWorker {
  private readonly db: Db;
  private readonly config: WebhookWorkerOptions['config'];
  private readonly logger: WebhookWorkerLogger;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly metrics: WebhookWorkerOptions['metrics'];
  private readonly runner: JobRunner<ClaimedDelivery>;

  constructor(options: WebhookWorkerOptions) {
    this.db = options.db;
    this.config = options.config;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.fetchTimeoutMs ?? 10_000;
    this.metrics = options.metrics;
    const db = options.db;
    this.runner = new JobRunner<ClaimedDelivery>(
      {
        name: 'webhook deliveries',
        claim: async (now, leaseMs, limit) => ({ jobs: await claimDue(db, now, leaseMs, limit) }),
        nextDueAt: async () => (await nextWakeAt(db)) ?? undefined,
        run: (row) => this.track(row),
      },
      {
        logger: options.logger,
        now: this.now,
        leaseMs: this.timeoutMs + LEASE_MARGIN_MS,
        concurrency: options.concurrency ?? 32,
        // One slow receiver must not hold up the others: claim whenever a slot is free.
        claimWhenFree: 1,
        idlePollMs: options.idleMaxMs ?? 2_000,
        minRecheckMs: MIN_RECHECK_MS,
      },
    );
  }

  start(): void {
    this.runner.start();
  }

  /** The loop's heartbeat: stopped when it is not running, stalled when one step hangs. */
  health(now: number): 'ok' | 'stalled' | 'stopped' {
    return this.runner.health(now);
  }

  /** Something was enqueued: look now instead of at the end of the current sleep. */
  notify(): void {
    this.runner.notify();
  }

  /** Stops claiming and lets in-flight deliveries finish, 10 s at most; what is cut off is retried after its lease. */
  async stop(): Promise<void> {
    await this.runner.stop();
  }

  /** Claims one batch of due deliveries and delivers them; resolves with how many were claimed. */
  runOnce(): Promise<number> {
    return this.runner.runOnce();
  }

  /** Runs one delivery; a failure to record is logged, and the lease retries the row. */
  private async track(row: ClaimedDelivery): Promise<void> {
    try {
      await this.deliver(row);
    } catch (err) {
      this.logger.error({ err, deliveryId: row.id }, 'webhook delivery: recording the attempt failed');
    }
  }

  private async deliver(row: ClaimedDelivery): Promise<void> {
    const attemptedAt = this.now();
    const started = performance.now();
    const outcome = await this.attempt(row, attemptedAt);
    // Cut off by shutdown: record nothing; the row stays leased and is retried after the lease.
    if (this.runner.stopSignal.aborted) return;
    const finishedAt = this.now();
    let next: number | null = null;
    const result = await recordAttempt(
      this.db,
      row,
      {
        attemptedAt,
        finishedAt,
        durationMs: Math.round(performance.now() - started),
        statusCode: outcome.statusCode,
        error: outcome.error,
      },
      (firstAttemptAt) => (next = retryAt(WEBHOOK_RETRY, row.attempts, finishedAt, firstAttemptAt)),
    );
    // The loop sleeps until its look-ahead, which the retry may come before.
    if (result === 'retry' && next !== null) this.runner.notify(next);
    this.metrics?.webhookAttempt(result);
    // The URL is left out: its query may carry the receiver's token.
    const fields = {
      deliveryId: row.id,
      campaignId: row.campaign_id,
      attempt: row.attempts,
      statusCode: outcome.statusCode,
      error: outcome.error,
      result,
    };
    if (result === 'delivered') this.logger.debug(fields, 'webhook delivered');
    else if (result === 'failed') this.logger.warn(fields, 'webhook delivery failed for good');
    else this.logger.info(fields, 'webhook attempt failed');
  }

  private async attempt(row: ClaimedDelivery, at: number): Promise<PostOutcome> {
    const sealed = await findSealedWebhookSecret(this.db, row.account_id, row.campaign_id);
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
      signal: this.runner.stopSignal,
    });
  }
}
