/**
 * CPU per request of Herald's own work on one line, without the HTTP client in the process: the
 * requests go through Fastify's inject (routing, auth, schema, handler, serialisation; no
 * sockets), CONCURRENCY at a time, so SQLite's group commit groups them as under load. On a
 * shared machine a rate is noise; the CPU this process spent per request is not (much).
 *
 *   BENCH_LINE=lead-new|lead-restart|string-immediate|leads-new|leads-update|create|batch-update|batch-create
 *     [BENCH_ENGINES=sqlite|postgres] [DATABASE_URL=...] [BENCH_KEYED=1]
 *     node --import tsx bench/cpu-per-request.ts
 *
 * The `lead-…` and `string-…` lines are triggers (`POST /api/campaigns/trigger`); `leads-new`,
 * `create` and `leads-update` are `POST /api/leads` (a new contact with a name; the same with a tag,
 * the peers harness's create; a tag for a known contact by email); `batch-update` and
 * `batch-create` send the same items as `leads-update` and `create`, 100 a request to
 * `POST /api/leads/batch`, and print CPU per item. On PostgreSQL the CPU of the
 * database's backends serving this database is printed too (read from /proc: the database on this
 * machine), the other half of a request's cost. BENCH_KEYED=1 sends each request with an
 * Idempotency-Key of its own (its answer stored with the effect, in one transaction).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { startHerald } from '../src/herald.js';
import { createLogger } from '../src/http/logger.js';
import { makeFixtures } from './fixtures.js';
import { clearForDispatch } from './scenarios/dispatch.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 4000);
const CONCURRENCY = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const line = process.env.BENCH_LINE ?? 'lead-new';
const engines = (process.env.BENCH_ENGINES ?? 'sqlite').split(',');
const keyed = process.env.BENCH_KEYED === '1';

for (const engine of engines) {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-cpu-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: engine === 'postgres' ? process.env.DATABASE_URL : '',
    HERALD_SECRET: randomBytes(32).toString('base64url'),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
  });
  const herald = await startHerald({ config, logger: createLogger(config.logLevel), role: 'api', listen: false });
  try {
    const f = await makeFixtures(herald.db, config, 1000);
    let i = 0;
    // `batch-update` and `batch-create`: the same items as leads-update and create, 100 a request
    // to `POST /api/leads/batch`; the figures are then per item.
    const batch = line.startsWith('batch-');
    const itemLine = line === 'batch-update' ? 'leads-update' : line === 'batch-create' ? 'create' : line;
    const perRequest = batch ? 100 : 1;
    const url = batch
      ? '/api/leads/batch'
      : itemLine.startsWith('leads-') || itemLine === 'create'
        ? '/api/leads'
        : '/api/campaigns/trigger';
    const item = (): unknown => {
      const n = i++;
      if (itemLine === 'leads-new') return { email: `new${n}-${f.run}@bench.example.com`, name: 'New Lead' };
      if (itemLine === 'leads-update') return { email: f.emails[n % f.emails.length], tags: [`wave ${n % 5}`] };
      if (itemLine === 'create') return { email: `new${n}-${f.run}@bench.example.com`, name: 'New Lead', tags: ['bench'] };
      if (itemLine === 'lead-new')
        return { campaignId: f.immediateCampaignId, lead: { email: `trig${n}-${f.run}@bench.example.com`, name: 'Trigger Lead' } };
      if (itemLine === 'lead-restart') return { campaignId: f.delayCampaignId, lead: { email: f.emails[n % f.emails.length] } };
      return { campaignId: f.immediateCampaignId, lead: f.emails[n % f.emails.length] };
    };
    const body = (): unknown => (batch ? { items: Array.from({ length: perRequest }, item) } : item());
    const one = async () => {
      const res = await herald.app!.inject({
        method: 'POST',
        url,
        headers: {
          'x-service-api-key': f.key,
          'content-type': 'application/json',
          ...(keyed ? { 'idempotency-key': randomBytes(12).toString('hex') } : {}),
        },
        payload: JSON.stringify(body()),
      });
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    };
    const run = async (n: number) => {
      let left = n;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (left >= perRequest) {
            left -= perRequest;
            await one();
          }
        }),
      );
    };
    // Warm-up: the JIT, prepared statements; and for restarts a pending send per contact.
    await run(2000);
    const results: string[] = [];
    // The backends serving this database (the pool's connections, alive across a round).
    const backends = async () =>
      engine === 'postgres'
        ? (
            await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(herald.db.kysely)
          ).rows.map((r) => r.pid)
        : [];
    const backendCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + procCpuMicros(pid), 0);
    for (let r = 0; r < ROUNDS; r++) {
      const pids = await backends();
      const pgBefore = backendCpu(pids);
      const cpu = process.cpuUsage();
      const start = performance.now();
      await run(REQUESTS);
      const used = process.cpuUsage(cpu);
      const ms = performance.now() - start;
      const pg = engine === 'postgres' ? `, PostgreSQL ${((backendCpu(pids) - pgBefore) / REQUESTS).toFixed(0)} µs` : '';
      results.push(`${((used.user + used.system) / REQUESTS).toFixed(0)} µs CPU/req${pg} (${(REQUESTS / (ms / 1000)).toFixed(0)} req/s)`);
    }
    console.log(`${engine} ${line}${keyed ? ' (Idempotency-Key)' : ''}: ${results.join(', ')}`);
    // No dispatcher ran: leave no backlog for the next one on this database (a test's, a bench's).
    await clearForDispatch(herald.db, f.accountId);
  } finally {
    await herald.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * CPU time of a process so far, in µs (0 once it is gone): the scheduler's run time in ns
 * (/proc/<pid>/schedstat), not /proc/<pid>/stat's 10 ms clock ticks, which quantised each of
 * ten backends' share of a round by ±10 ms (±25 µs a request over 4,000).
 */
function procCpuMicros(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return 0;
  }
}
