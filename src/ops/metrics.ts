import client from 'prom-client';
import type { Db } from '../db/connect.js';
import { type QueueDepth, sendQueueDepth } from '../modules/sends/sends.service.js';
import { deliveryBacklog } from '../webhooks/deliveries.repo.js';

/**
 * Prometheus metrics of one Herald process (docs/decisions.md, Operations).
 *
 * Counters and histograms are this process's own (sum them over processes); the queue and
 * webhook backlog gauges are read from the shared database at scrape time, so every process
 * reports the same numbers (take max, not sum). Default process metrics (CPU, memory, event
 * loop lag, GC) are collected once per Node process into their own registry.
 */
export class HeraldMetrics {
  readonly registry = new client.Registry();
  private readonly httpDuration: client.Histogram<'method' | 'route' | 'status'>;
  private readonly sends: client.Counter<'channel' | 'outcome'>;
  private readonly sendLag: client.Histogram<'channel'>;
  private readonly webhookDeliveries: client.Counter<'outcome'>;

  constructor(db: Db, info: { role: string; version: string }) {
    const registers = [this.registry];
    new client.Gauge({
      name: 'herald_info',
      help: 'Always 1; labels name the version, role and database engine',
      labelNames: ['version', 'role', 'engine'],
      registers,
    }).set({ version: info.version, role: info.role, engine: db.engine }, 1);
    // The request count of each label set is the histogram's `_count`: read from it at scrape time
    // rather than counted a second time per request (a label set is hashed per metric written).
    const countName = 'herald_http_request_duration_seconds_count';
    const durations = () => this.httpDuration;
    new client.Counter({
      name: 'herald_http_requests_total',
      help: 'HTTP requests answered, by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
      async collect() {
        const { values } = await durations().get();
        this.reset();
        for (const value of values) {
          const labels = value.labels as Record<string, string | number>;
          if (value.metricName === countName && value.value > 0) this.inc({ ...labels, ...sharedLabels(value) }, value.value);
        }
      },
    });
    this.httpDuration = new client.Histogram({
      name: 'herald_http_request_duration_seconds',
      help: 'Time from receiving a request to sending its response',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.sends = new client.Counter({
      name: 'herald_sends_total',
      help: 'Claimed sends finished by this process: sent, optout, rejected, error (for good), retry (requeued after a temporary failure), lease_lost (delivered after another worker took it over)',
      labelNames: ['channel', 'outcome'],
      registers,
    });
    this.sendLag = new client.Histogram({
      name: 'herald_send_lag_seconds',
      help: "From a send's due time (its retry time for a retry) to the provider accepting it",
      labelNames: ['channel'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
      registers,
    });
    this.webhookDeliveries = new client.Counter({
      name: 'herald_webhook_deliveries_total',
      help: 'Webhook delivery attempts by result: delivered, retry, failed (for good), stale (lease taken over meanwhile)',
      labelNames: ['outcome'],
      registers,
    });

    const queue = cachedRead(() => readQueueDepths(db));
    new client.Gauge({
      name: 'herald_queue_sends',
      help: 'Sends in the queue (whole database): due (claimable now), scheduled (due later: delays and retries), in_flight (claimed by a worker)',
      labelNames: ['state'],
      registers,
      async collect() {
        const depths = await queue();
        for (const [state, value] of Object.entries(depths.sends)) this.set({ state }, value);
      },
    });
    new client.Gauge({
      name: 'herald_webhook_backlog',
      help: 'Webhook deliveries not finished (whole database): due, scheduled (next attempt later), in_flight',
      labelNames: ['state'],
      registers,
      async collect() {
        const depths = await queue();
        for (const [state, value] of Object.entries(depths.webhooks)) this.set({ state }, value);
      },
    });

    const pool = db.pool;
    if (pool) {
      // SQLite has one synchronous connection and no pool: these are PostgreSQL only.
      new client.Gauge({
        name: 'herald_db_pool_connections',
        help: 'PostgreSQL pool connections of this process: total (open) and idle',
        labelNames: ['state'],
        registers,
        collect() {
          this.set({ state: 'total' }, pool.totalCount);
          this.set({ state: 'idle' }, pool.idleCount);
        },
      });
      new client.Gauge({
        name: 'herald_db_pool_waiting',
        help: 'Queries of this process waiting for a free PostgreSQL pool connection',
        registers,
        collect() {
          this.set(pool.waitingCount);
        },
      });
      new client.Gauge({ name: 'herald_db_pool_max', help: 'PostgreSQL pool size of this process', registers }).set(pool.options.max ?? 10);
    }
    const groupCommit = db.groupCommit;
    if (groupCommit) {
      // Read from the group commit's own counts at each scrape (db/postgres-group-commit.ts).
      const counts = groupCommit.counts;
      new client.Counter({
        name: 'herald_db_group_commits_total',
        help: 'PostgreSQL group commits of two or more write statements by this process: committed, or rolled_back (each statement then ran alone)',
        labelNames: ['outcome'],
        registers,
        collect() {
          this.reset();
          this.inc({ outcome: 'committed' }, counts.groups);
          this.inc({ outcome: 'rolled_back' }, counts.rolledBack);
        },
      });
      new client.Counter({
        name: 'herald_db_grouped_statements_total',
        help: 'Write statements of this process committed in a PostgreSQL group commit with others (the rest ran alone)',
        registers,
        collect() {
          this.reset();
          this.inc(counts.grouped);
        },
      });
    }
  }

  /** `route` is the route's pattern (`/t/c/:token`), never the URL: no ids, tokens or keys in a label. */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
  }

  sendFinished(channel: string, outcome: SendOutcome, lagMs?: number): void {
    this.sends.inc({ channel, outcome });
    if (lagMs !== undefined) this.sendLag.observe({ channel }, Math.max(0, lagMs) / 1000);
  }

  webhookAttempt(outcome: string): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** The text exposition: this process's registry and the Node process metrics. */
  async render(): Promise<{ contentType: string; body: string }> {
    const own = await this.registry.metrics();
    return { contentType: this.registry.contentType, body: (await processRegistry().metrics()) + own };
  }
}

/** The labels prom-client keeps beside a histogram sample's own (`le`): the label set it was observed with. */
function sharedLabels(value: object): Record<string, string | number> {
  return (value as { sharedLabels?: Record<string, string | number> }).sharedLabels ?? {};
}

export type SendOutcome = 'sent' | 'optout' | 'rejected' | 'error' | 'retry' | 'lease_lost';

let processMetrics: client.Registry | undefined;

/** CPU, memory, event loop and GC: once per Node process, however many Heralds it runs (tests). */
function processRegistry(): client.Registry {
  if (!processMetrics) {
    processMetrics = new client.Registry();
    client.collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

interface Depths {
  sends: QueueDepth;
  webhooks: QueueDepth;
}

/**
 * Two counting queries (the queues' repositories), each a range scan of the (status, due time)
 * index over the unfinished statuses only: finished rows, the bulk of both tables, are never
 * read. A large backlog (a million delayed sends) still costs a scan of it: the result is kept a
 * second, and on SQLite the scan runs off the event loop (db.reads).
 */
async function readQueueDepths(db: Db): Promise<Depths> {
  const now = Date.now();
  const [sends, webhooks] = await Promise.all([sendQueueDepth(db.reads, now), deliveryBacklog(db.reads, now)]);
  return { sends, webhooks };
}

const QUEUE_CACHE_MS = 1_000;

/** One read serves every gauge of a scrape, and scrapes within a second of each other. */
function cachedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.at >= QUEUE_CACHE_MS) {
      const value = read();
      last = { at: now, value };
      // A failed read is not kept: the next scrape tries again.
      value.catch(() => {
        if (last?.value === value) last = undefined;
      });
    }
    return last.value;
  };
}
