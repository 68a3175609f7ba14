import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import type { Config } from '../../src/config.js';
import type { Fixtures } from '../fixtures.js';
import { percentile } from './dispatch.js';

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
  /** Herald's process CPU over the run, ms per trigger (API and dispatcher together). */
  cpuMsPerTrigger: number;
  pass: boolean;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The sustained line (issue 9): one `herald serve --role all` process (what `npm start` runs: API
 * and dispatcher) on the bench's SQLite file, taking immediate triggers at a fixed rate for
 * `seconds` while its dispatcher delivers them to the sink. A rate holds when the API keeps up
 * (97% of the rate answered 200), the backlog stays bounded (at most one second of triggers
 * queued when the load stops) and the due-to-delivered p99 is under 1 s. Rates are tried in
 * order and the line stops at the first that does not hold. The load generator runs in this
 * process and the sink in another: all three share the machine's cores, as they would not in
 * production.
 */
export async function benchSustained(options: {
  config: Config;
  fixtures: Fixtures;
  rates: number[];
  seconds: number;
}): Promise<SustainedResult[]> {
  const { config, fixtures } = options;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  // BENCH_SUSTAINED_PROF=dir: a --cpu-prof profile of the Herald process, for bench/cpu-split.mjs.
  const prof = process.env.BENCH_SUSTAINED_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SUSTAINED_PROF}`] : [];
  const herald = spawn('node', [...prof, 'bin/herald', 'serve', '--role', 'all'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: config.dataDir,
      DATABASE_URL: '',
      HERALD_SECRET: config.secret,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      SMTP_URL: config.smtpUrl ?? '',
      SMTP_POOL_SIZE: String(config.smtpPoolSize),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Its stderr holds the first-administrator hint: shown only when it stops on its own.
  let stderr = '';
  herald.stderr!.on('data', (d) => (stderr += d));
  herald.once('exit', (code) => code !== null && code !== 0 && console.error(stderr));
  const db = new Database(join(config.dataDir, 'herald.db'), { readonly: true });
  db.pragma('busy_timeout = 5000');
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(baseUrl);
    const results: SustainedResult[] = [];
    for (const rate of options.rates) {
      const result = await runRate({ baseUrl, db, fixtures, rate, seconds: options.seconds, pid: herald.pid! });
      results.push(result);
      if (!result.pass) break;
    }
    return results;
  } finally {
    db.close();
    herald.kill('SIGTERM');
    await new Promise((resolve) => herald.once('exit', resolve));
  }
}

async function runRate(o: { baseUrl: string; db: Database.Database; fixtures: Fixtures; rate: number; seconds: number; pid: number }) {
  const { db, fixtures, rate, seconds } = o;
  const from = Date.now();
  const open = db.prepare(`select count(*) as n from sends where campaign_id = ? and created_at >= ? and status in ('queued', 'sending')`);
  const backlog = () => Number((open.get(fixtures.immediateCampaignId, from) as { n: number }).n);
  let maxBacklog = 0;
  const watch = setInterval(() => {
    maxBacklog = Math.max(maxBacklog, backlog());
  }, 1000);
  const cpuBefore = processCpuMs(o.pid);
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
  const cpuMs = processCpuMs(o.pid) - cpuBefore;
  const backlogAtEnd = backlog();
  maxBacklog = Math.max(maxBacklog, backlogAtEnd);
  // Let the dispatcher finish the run's sends (their latency counts) before the next rate.
  const drainUntil = Date.now() + 60_000;
  while (backlog() > 0 && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 250));
  const rows = db
    .prepare(`select due_at, sent_at, status from sends where campaign_id = ? and created_at >= ?`)
    .all(fixtures.immediateCampaignId, from) as { due_at: number; sent_at: number | null; status: string }[];
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

async function waitForHealth(baseUrl: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('sustained: herald serve did not start within 90 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A process's user + system CPU time so far, ms (Linux /proc; 0 elsewhere). */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}
