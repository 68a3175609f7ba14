import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Config } from '../../src/config.js';
import type { Fixtures } from '../fixtures.js';
import { startHeraldProcesses } from '../workers.js';
import { POSTGRES_WORKERS, percentile } from './dispatch.js';

/** Triggers at the first rate before any is measured. */
const WARM_UP_SECONDS = 3;

/** What one rate of the sustained line came to. */
export interface SustainedResult {
  rate: number;
  seconds: number;
  /** Triggers the API answered 200 per second over the run, and how many it refused or failed. */
  acceptedPerSecond: number;
  refused: number;
  /** Queued or sending sends of the run: most seen during it, and left when the load stopped. */
  maxBacklog: number;
  backlogAtEnd: number;
  /** Due-to-delivered (sent_at − due_at) of the run's sends, ms. */
  p50: number;
  p99: number;
  /** Sends of the run not sent within 60 s after the load stopped. */
  unsent: number;
  /** Herald's processes' CPU over the run, ms per trigger (API and dispatcher together). */
  cpuMsPerTrigger: number;
  pass: boolean;
}

/**
 * The sustained line (issue 9): on SQLite one `herald serve --role all` process (what `npm start`
 * runs: API and dispatcher) on the bench's file; on PostgreSQL one `--role api` process and two
 * `--role worker` processes (the scale-out the issue asks for), woken by the API's NOTIFY. They
 * take immediate triggers at a fixed rate for `seconds` while the dispatcher delivers them to the
 * sink. A rate holds when the API keeps up (97% of the rate answered 200), the backlog stays
 * bounded (at most one second of triggers queued when the load stops) and the due-to-delivered
 * p99 is under 1 s. Rates are tried in order, after WARM_UP_SECONDS at the first, and the line
 * stops at the first that does not hold. The load generator runs in this process and the sink in
 * another: all three share the machine's cores, as they would not in production.
 */
export async function benchSustained(options: {
  config: Config;
  fixtures: Fixtures;
  rates: number[];
  seconds: number;
}): Promise<SustainedResult[]> {
  const { config, fixtures } = options;
  // BENCH_SUSTAINED_PROF=dir: a --cpu-prof profile of the Herald process(es), for bench/cpu-split.mjs.
  const prof = process.env.BENCH_SUSTAINED_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SUSTAINED_PROF}`] : [];
  // SQLite: one process does both (npm start). PostgreSQL: an API process and two workers.
  const roles: ('all' | 'api' | 'worker')[] = config.databaseUrl ? ['api', ...Array<'worker'>(POSTGRES_WORKERS).fill('worker')] : ['all'];
  const herald = await startHeraldProcesses(config, roles, prof);
  const reader = config.databaseUrl ? postgresReader(config.databaseUrl) : sqliteReader(join(config.dataDir, 'herald.db'));
  try {
    // Unmeasured, like the API lines' warm-up second: the processes are new, and their first
    // seconds run code V8 has not compiled yet (the first rate's p99 doubled without it).
    await runRate({
      baseUrl: `http://127.0.0.1:${herald.ports[0]}`,
      reader,
      fixtures,
      rate: options.rates[0]!,
      seconds: WARM_UP_SECONDS,
      cpuMs: () => herald.cpuMs(),
    });
    const results: SustainedResult[] = [];
    for (const rate of options.rates) {
      const result = await runRate({
        baseUrl: `http://127.0.0.1:${herald.ports[0]}`,
        reader,
        fixtures,
        rate,
        seconds: options.seconds,
        cpuMs: () => herald.cpuMs(),
      });
      results.push(result);
      if (!result.pass) break;
    }
    return results;
  } finally {
    await reader.close();
    await herald.stop();
  }
}

/** The two reads of the line, on either engine (read-only; the Herald processes do the writing). */
interface RunReader {
  backlog(campaignId: string, from: number): Promise<number>;
  rows(campaignId: string, from: number): Promise<{ due_at: number; sent_at: number | null; status: string }[]>;
  close(): Promise<void>;
}

const BACKLOG = `select count(*) as n from sends where campaign_id = $1 and created_at >= $2 and status in ('queued', 'sending')`;
const ROWS = `select due_at, sent_at, status from sends where campaign_id = $1 and created_at >= $2`;

function sqliteReader(path: string): RunReader {
  const db = new Database(path, { readonly: true });
  db.pragma('busy_timeout = 5000');
  const backlog = db.prepare(BACKLOG.replace('$1', '?').replace('$2', '?'));
  const rows = db.prepare(ROWS.replace('$1', '?').replace('$2', '?'));
  return {
    backlog: async (campaignId, from) => Number((backlog.get(campaignId, from) as { n: number }).n),
    rows: async (campaignId, from) => rows.all(campaignId, from) as { due_at: number; sent_at: number | null; status: string }[],
    close: async () => {
      db.close();
    },
  };
}

function postgresReader(url: string): RunReader {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  return {
    backlog: async (campaignId, from) => Number((await pool.query(BACKLOG, [campaignId, from])).rows[0].n),
    rows: async (campaignId, from) =>
      (await pool.query(ROWS, [campaignId, from])).rows.map((r) => ({
        due_at: Number(r.due_at),
        sent_at: r.sent_at === null ? null : Number(r.sent_at),
        status: r.status,
      })),
    close: () => pool.end(),
  };
}

async function runRate(o: { baseUrl: string; reader: RunReader; fixtures: Fixtures; rate: number; seconds: number; cpuMs: () => number }) {
  const { reader, fixtures, rate, seconds } = o;
  const from = Date.now();
  const backlog = () => reader.backlog(fixtures.immediateCampaignId, from);
  let maxBacklog = 0;
  const watch = setInterval(() => {
    void backlog().then((n) => (maxBacklog = Math.max(maxBacklog, n)));
  }, 1000);
  const cpuBefore = o.cpuMs();
  let next = 0;
  const n = fixtures.emails.length;
  const result = await autocannon({
    url: o.baseUrl,
    connections: 10,
    overallRate: rate,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/api/campaigns/trigger',
        headers: { 'content-type': 'application/json', 'x-service-api-key': fixtures.key },
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ campaignId: fixtures.immediateCampaignId, lead: fixtures.emails[next++ % n] }),
        }),
      },
    ],
  });
  clearInterval(watch);
  const cpuMs = o.cpuMs() - cpuBefore;
  const backlogAtEnd = await backlog();
  maxBacklog = Math.max(maxBacklog, backlogAtEnd);
  // Let the dispatcher finish the run's sends (their latency counts) before the next rate.
  const drainUntil = Date.now() + 60_000;
  while ((await backlog()) > 0 && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 250));
  const rows = await reader.rows(fixtures.immediateCampaignId, from);
  const latencies = rows
    .filter((r) => r.status === 'sent' && r.sent_at !== null)
    .map((r) => r.sent_at! - r.due_at)
    .sort((a, b) => a - b);
  const ok = Number(result['2xx'] ?? 0);
  const accepted = ok / result.duration;
  const p99 = percentile(latencies, 99);
  return {
    rate,
    seconds,
    acceptedPerSecond: accepted,
    refused: result.non2xx + result.errors,
    maxBacklog,
    backlogAtEnd,
    p50: percentile(latencies, 50),
    p99,
    unsent: rows.length - latencies.length,
    cpuMsPerTrigger: cpuMs / Math.max(1, ok),
    pass: accepted >= rate * 0.97 && backlogAtEnd <= rate && p99 < 1000,
  } satisfies SustainedResult;
}
