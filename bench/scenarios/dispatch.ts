import type { Insertable } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../src/config.js';
import { type Db, openDatabase } from '../../src/db/connect.js';
import type { SendsRow } from '../../src/db/schema.js';
import { inTransaction } from '../../src/db/transaction.js';
import { SENDS_WAKEUP_CHANNEL } from '../../src/dispatcher/dispatcher.js';
import { startHerald } from '../../src/herald.js';
import { newId } from '../../src/ids.js';
import { notifyThroughDatabase } from '../../src/jobs/wakeup.js';
import { makeEmailCampaign } from '../../test/helpers/herald.js';
import type { Fixtures } from '../fixtures.js';
import type { SinkProcess } from '../sink.js';
import { startHeraldProcesses } from '../workers.js';

/** Worker processes draining the dispatch runs on PostgreSQL (issue 9: two, as production scales out). */
export const POSTGRES_WORKERS = 2;

/** Where the sends are queued and who delivers them: one worker in this process, or worker processes. */
interface Workers {
  db: Db;
  /** Wakes the workers for sends due at `dueAt` (what a trigger does). */
  wake(dueAt: number): void;
  /** CPU of the delivering processes so far, ms. */
  cpuMs(): number;
  close(): Promise<void>;
}

/**
 * SQLite: a worker in this process (`startHerald({ role: 'worker' })`, the production assembly).
 * PostgreSQL: POSTGRES_WORKERS `herald serve --role worker` processes sharing the queue, woken
 * by NOTIFY as an API process wakes them; this process only queues and watches.
 */
async function startWorkers(config: Config, logger: Logger): Promise<Workers> {
  if (!config.databaseUrl) {
    const worker = await startHerald({ config, logger, role: 'worker' });
    return {
      db: worker.db,
      wake: (dueAt) => worker.dispatcher!.notify(dueAt),
      cpuMs: () => {
        const used = process.cpuUsage();
        return (used.user + used.system) / 1000;
      },
      close: () => worker.close(),
    };
  }
  // BENCH_WORKER_PROF=<dir>: a --cpu-prof profile of each worker process (bench/cpu-split.mjs).
  const prof = process.env.BENCH_WORKER_PROF;
  const processes = await startHeraldProcesses(
    config,
    Array(POSTGRES_WORKERS).fill('worker'),
    prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
  );
  const db = await openDatabase(config, { poolSize: 2 });
  return {
    db,
    wake: notifyThroughDatabase(db, SENDS_WAKEUP_CHANNEL, logger),
    cpuMs: () => processes.cpuMs(),
    close: async () => {
      await processes.stop();
      await db.close();
    },
  };
}

export interface DispatchResult {
  name: string;
  sends: number;
  /** Sends marked sent per second, from the moment they were queued to the last one sent. */
  perSecond: number;
  /** Due-to-delivered (sent_at − due_at of the send rows; sent_at is set once the SMTP server accepted), ms. */
  p50: number;
  p99: number;
  /** Sends that ended other than sent, and messages the sink did not get. */
  failed: number;
  missing: number;
  /** CPU time of Herald's worker(s) per send (the sink runs apart): steadier than rates on a shared machine. */
  cpuMsPerSend: number;
}

/**
 * Before the worker starts: the HTTP scenarios left queued (immediate) and pending (delay)
 * sends behind, which are not this benchmark's work, so they are cancelled (this run's account
 * only). Returns why dispatch cannot be measured when the database holds due sends of other
 * accounts: the worker would claim and deliver them too.
 */
export async function clearForDispatch(db: Db, accountId: string, now = Date.now()): Promise<string | undefined> {
  await db.kysely
    .updateTable('sends')
    .set({ status: 'cancelled', updated_at: now })
    .where('account_id', '=', accountId)
    .where('status', 'in', ['queued', 'pending'])
    .execute();
  const foreign = await db.kysely
    .selectFrom('sends')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '!=', accountId)
    .where('status', 'in', ['queued', 'pending', 'sending'])
    .executeTakeFirstOrThrow();
  const n = Number(foreign.n);
  return n > 0 ? `the database holds ${n} unsent sends of other accounts; give DATABASE_URL a database of its own` : undefined;
}

/**
 * A worker (`startHerald({ role: 'worker' })`, the production assembly) delivering to the SMTP
 * sink. Burst: `burst` immediate sends all due now (throughput; their latency is mostly queueing).
 * Paced: sends coming due at `rate` per second for `seconds` (the latency a send sees when the
 * dispatcher keeps up); `rate` undefined: half the burst's throughput, at most 200/s, so the
 * run measures scheduling latency and not a queue, however loaded the machine is.
 */
export async function benchDispatch(options: {
  config: Config;
  logger: Logger;
  fixtures: Fixtures;
  sink: SinkProcess;
  burst: number;
  rate: number | undefined;
  seconds: number;
}): Promise<DispatchResult[]> {
  const { config, fixtures, sink } = options;
  const worker = await startWorkers(config, options.logger);
  try {
    const t = { db: worker.db, config };
    const immediate = (name: string) => makeEmailCampaign(t, fixtures.accountId, { name, reentry: true, cooldownDays: 0 });
    const delayed = (name: string) =>
      makeEmailCampaign(t, fixtures.accountId, { name, mode: 'delay', delaySeconds: 60, reentry: true, cooldownDays: 0 });

    // Unmeasured: opens the SMTP pool and warms the render path.
    const warm = await immediate('Bench warm-up');
    await queueAndWait(
      worker,
      fixtures,
      sink,
      warm.id,
      'queued',
      Array.from({ length: 50 }, () => Date.now()),
    );

    const burstCampaign = await immediate('Bench burst');
    const now = Date.now();
    const burstFrom = process.hrtime.bigint() / 1000n;
    const burst = await queueAndWait(
      worker,
      fixtures,
      sink,
      burstCampaign.id,
      'queued',
      Array.from({ length: options.burst }, () => now),
    );
    // The window to read a --cpu-prof profile in (its timestamps are this clock's, in µs): bench/cpu-split.mjs.
    if (process.env.BENCH_PROFILE_WINDOW) console.error(`burst window (µs): ${burstFrom} ${process.hrtime.bigint() / 1000n}`);

    const burstResult = summarise(`dispatch burst: ${options.burst} due at once`, burst);

    const rate = options.rate ?? Math.max(10, Math.min(200, Math.round(burstResult.perSecond / 2)));
    // One pending send per contact and campaign (a unique index): at most one per contact here.
    const count = Math.min(fixtures.contactIds.length, Math.round(rate * options.seconds));
    const pacedCampaign = await delayed('Bench paced');
    const start = Date.now() + 500;
    const paced = await queueAndWait(
      worker,
      fixtures,
      sink,
      pacedCampaign.id,
      'pending',
      Array.from({ length: count }, (_, i) => start + Math.round((i * 1000) / rate)),
    );

    return [burstResult, summarise(`dispatch paced: ${rate}/s due for ${(count / rate).toFixed(0)} s`, paced)];
  } finally {
    await worker.close();
  }
}

interface Outcome {
  rows: { due_at: number; sent_at: number | null; status: string }[];
  cpuMs: number;
  /** When the sends were committed and the dispatcher told. */
  queuedAt: number;
  delivered: number;
}

async function queueAndWait(
  workers: Workers,
  fixtures: Fixtures,
  sink: SinkProcess,
  campaignId: string,
  status: 'queued' | 'pending',
  dueAts: number[],
): Promise<Outcome> {
  const db = workers.db;
  const createdAt = Date.now();
  const rows: Insertable<SendsRow>[] = dueAts.map((dueAt, i) => ({
    id: newId('snd'),
    account_id: fixtures.accountId,
    campaign_id: campaignId,
    contact_id: fixtures.contactIds[i % fixtures.contactIds.length]!,
    status,
    channel: 'email',
    due_at: dueAt,
    wake_at: dueAt,
    lease_until: null,
    attempts: 0,
    reason: null,
    to_address: null,
    provider_message_id: null,
    processed_at: null,
    delivered_at: null,
    sent_at: null,
    created_at: createdAt,
    updated_at: createdAt,
    trigger_data: null,
  }));
  const before = await sink.count();
  const cpu = workers.cpuMs();
  await inTransaction(db, async (tx) => {
    // 500 rows a statement keeps SQLite under its bound-parameter limit.
    for (let i = 0; i < rows.length; i += 500)
      await tx
        .insertInto('sends')
        .values(rows.slice(i, i + 500))
        .execute();
  });
  const queuedAt = Date.now();
  // What a trigger does: in-process with role all, a NOTIFY from an API process on PostgreSQL.
  workers.wake(Math.min(...dueAts));

  // Watch the sink (a message over IPC, nothing on Herald's thread) and look at the database only
  // every half second or once every message has arrived: a count over the sends is not free.
  const deadline = Math.max(...dueAts) + 120_000;
  let lookedAt = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 20));
    const arrived = (await sink.count()) - before >= rows.length;
    if (!arrived && Date.now() - lookedAt < 500) continue;
    lookedAt = Date.now();
    const open = await db.kysely
      .selectFrom('sends')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('status', 'in', ['pending', 'queued', 'sending'])
      .executeTakeFirstOrThrow();
    if (Number(open.n) === 0) break;
    if (Date.now() > deadline) throw new Error(`dispatch: ${open.n} sends still open after 120 s`);
  }
  const cpuMs = workers.cpuMs() - cpu;
  const done = await db.kysely.selectFrom('sends').select(['due_at', 'sent_at', 'status']).where('campaign_id', '=', campaignId).execute();
  return {
    rows: done.map((r) => ({ due_at: Number(r.due_at), sent_at: r.sent_at === null ? null : Number(r.sent_at), status: r.status })),
    queuedAt,
    cpuMs,
    delivered: (await sink.count()) - before,
  };
}

function summarise(name: string, outcome: Outcome): DispatchResult {
  const sent = outcome.rows.filter((r) => r.status === 'sent' && r.sent_at !== null);
  const latencies = sent.map((r) => r.sent_at! - r.due_at).sort((a, b) => a - b);
  const firstDue = Math.max(outcome.queuedAt, Math.min(...outcome.rows.map((r) => r.due_at)));
  const lastSent = Math.max(...sent.map((r) => r.sent_at!));
  return {
    name,
    sends: outcome.rows.length,
    perSecond: sent.length / Math.max(0.001, (lastSent - firstDue) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    failed: outcome.rows.length - sent.length,
    missing: outcome.rows.length - outcome.delivered,
    cpuMsPerSend: outcome.cpuMs / outcome.rows.length,
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
