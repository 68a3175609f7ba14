/**
 * `npm run bench`: Herald's public API under autocannon load, and the dispatcher's throughput,
 * on SQLite and (when DATABASE_URL is set) PostgreSQL. Every API figure is printed beside a bare
 * Fastify echo measured in the same run, and the dispatch burst beside a bare nodemailer pool
 * sending a prebuilt message into the same sink (the ceiling), since absolute numbers depend on
 * the machine and on whatever else runs on it. Targets are printed as PASS/MISS; a miss never fails the run.
 *
 *   BENCH_SECONDS         measured seconds per API line (default 5, after 1 s of warm-up)
 *   BENCH_DISPATCH_SENDS  sends in the dispatch burst (default 2000)
 *   BENCH_DISPATCH_RATE   sends per second coming due in the paced dispatch run (default: half
 *                         the burst's throughput, at most 200, so that it measures latency, not a queue)
 *   BENCH_ONLY            run only the lines whose name contains one of these comma-separated
 *                         words (e.g. `leads,dispatch`; for profiling with node --cpu-prof)
 *   BENCH_PROFILE_WINDOW  print the dispatch burst's time window for bench/cpu-split.mjs (with node --cpu-prof)
 *   BENCH_ROLE            role of the Herald under HTTP load: api (default; the API process of a
 *                         scale-out, no dispatcher competing for the CPU) or all (npm start)
 *   BENCH_SUSTAINED_RATES   the sustained line's trigger rates, tried in order until one does not hold
 *                         (default 400,600,800; on PostgreSQL an API process and two workers)
 *   BENCH_SUSTAINED_SECONDS seconds of load per rate (default 60; shorter for a quick look)
 *   SMTP_POOL_SIZE        Herald's setting: SMTP connections of the dispatch worker and of the ceiling's
 *                         bare pool alike (default: Herald's default, 5)
 *   SMTP_THREAD           Herald's setting: the dispatch's SMTP pool on a thread of its own (default: Herald's,
 *                         true on SQLite, false on PostgreSQL); the ceiling's bare pool runs on the bench's loop
 *   BENCH_WORKER_PROF     PostgreSQL: a directory for a --cpu-prof profile of each worker process
 *   BENCH_ENGINES         only these engines (e.g. `postgres`); default sqlite, and postgres when
 *                         DATABASE_URL is set
 *   DATABASE_URL          also run on this PostgreSQL (a database of its own: the dispatch
 *                         worker claims every due send in it)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { loadConfig } from '../src/config.js';
import type { Engine } from '../src/db/connect.js';
import { type Role, startHerald } from '../src/herald.js';
import { createLogger } from '../src/http/logger.js';
import { startBare } from './bare.js';
import { makeFixtures } from './fixtures.js';
import { load } from './load.js';
import { apiRow, bareRow, batchRow, ceilingRow, dispatchRow, printTable, type Row, sustainedRow } from './report.js';
import { type ApiScenario, apiScenarios, BARE_BODY } from './scenarios/api.js';
import { benchCeiling, buildMessage, IN_FLIGHT } from './scenarios/ceiling.js';
import { benchDispatch, clearForDispatch, POSTGRES_WORKERS } from './scenarios/dispatch.js';
import { benchSustained } from './scenarios/sustained.js';
import { type SinkProcess, startSinkProcess } from './sink.js';
import { VACUUM_NOTE, vacuumUnlessAutovacuum } from './vacuum.js';

const SECONDS = whole('BENCH_SECONDS', 5);
const BURST = whole('BENCH_DISPATCH_SENDS', 2000);
const RATE = process.env.BENCH_DISPATCH_RATE ? whole('BENCH_DISPATCH_RATE', 200) : undefined;
const ROLE: Role = process.env.BENCH_ROLE === 'all' ? 'all' : 'api';
const SUSTAINED_RATES = (process.env.BENCH_SUSTAINED_RATES ?? '400,600,800').split(',').map(Number);
const SUSTAINED_SECONDS = whole('BENCH_SUSTAINED_SECONDS', 60);
const WARMUP_SECONDS = 1;
const CONNECTIONS = 10;
const CONTACTS = 1000;
const RATE_LIMIT = '1000000';
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((w) => w.trim())
  .filter(Boolean);
const selected = (name: string) => ONLY.length === 0 || ONLY.some((w) => name.includes(w));

function whole(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of 1 or more, got '${raw}'`);
  return value;
}

async function benchEngine(engine: Engine, sink: SinkProcess): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: engine === 'postgres' ? process.env.DATABASE_URL : '',
    HERALD_SECRET: randomBytes(32).toString('base64url'),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    RATE_LIMIT_BURST: RATE_LIMIT,
    SMTP_URL: sink.url,
    SMTP_POOL_SIZE: process.env.SMTP_POOL_SIZE ?? '',
    SMTP_THREAD: process.env.SMTP_THREAD ?? '',
  });
  const logger = createLogger(config.logLevel);
  const started = Date.now();
  try {
    const herald = await startHerald({ config, logger, role: ROLE, listen: true });
    const fixtures = await makeFixtures(herald.db, config, CONTACTS);
    const scenarios = apiScenarios(fixtures).filter((s) => selected(s.name));
    if (scenarios.length > 0) {
      const { port } = herald.app!.server.address() as AddressInfo;
      const rows = await benchApi(engine, logger, `http://127.0.0.1:${port}`, fixtures.key, scenarios);
      printTable(`${engine}: HTTP API, ${CONNECTIONS} connections, ${SECONDS} s each`, rows);
    }
    const blocked = await clearForDispatch(herald.db, fixtures.accountId);
    const message = await buildMessage(herald.db, config, fixtures);
    await herald.close();
    // The queue as autovacuum keeps it, on a server without it (bench/vacuum.ts).
    let vacuumed = false;
    const vacuum = async () => {
      if (engine === 'postgres' && config.databaseUrl && (await vacuumUnlessAutovacuum(config.databaseUrl))) vacuumed = true;
    };
    if (!selected('dispatch')) {
      // left out by BENCH_ONLY
    } else if (blocked) {
      console.log(`\n${engine}: dispatch not measured: ${blocked}`);
    } else {
      // Unmeasured: the sink and nodemailer reach full speed only after a few thousand messages
      // (four runs of 2,000 in a row, 2026-11-25: 1,100, 1,760, 2,120, 2,080 messages/s).
      await vacuum();
      await benchCeiling(config, message, 5000);
      // The ceiling runs just before and just after the dispatch runs (drift on a shared machine).
      const ceiling = [await benchCeiling(config, message, BURST)];
      const dispatch = await benchDispatch({ config, logger, fixtures, sink, burst: BURST, rate: RATE, seconds: SECONDS });
      ceiling.push(await benchCeiling(config, message, BURST));
      const connections = `${config.smtpPoolSize}${process.env.SMTP_POOL_SIZE ? '' : ' (default)'}`;
      const ceilingLine = ceilingRow(ceiling, connections, IN_FLIGHT);
      printTable(
        `${engine}: dispatcher (${engine === 'postgres' ? `${POSTGRES_WORKERS} worker processes` : 'role worker'}; SMTP sink in a child process, ${connections} pooled connections${config.smtpThread ? ' on their own thread' : ''}); ` +
          'latency = sent_at − due_at (ceiling: sendMail to the 250 reply)',
        [ceilingLine, ...dispatch.map((d, i) => dispatchRow(engine, d, i === 1, ceilingLine.rate))],
        { rate: 'sends/s', latency: 'ms', ratio: 'vs ceiling' },
      );
    }
    if (selected('sustained') && !blocked) {
      await vacuum();
      const results = await benchSustained({ config, fixtures, rates: SUSTAINED_RATES, seconds: SUSTAINED_SECONDS });
      const best = results.filter((r) => r.pass).at(-1)?.rate ?? results[0]?.rate;
      printTable(
        `${engine}: sustained (${engine === 'postgres' ? 'herald serve --role api + 2 --role worker processes' : 'one herald serve --role all process'}; immediate triggers at a fixed rate, 10 connections, ` +
          `while its dispatcher delivers; latency = sent_at − due_at; held: API took ≥97% of the rate, ≤1 s of backlog at the end, p99 < 1 s)`,
        results.map((r) => sustainedRow(r, best, engine)),
        { rate: 'accepted/s', latency: 'ms', ratio: '' },
      );
    }
    if (vacuumed) console.log(`(${VACUUM_NOTE})`);
    console.log(`(${engine} took ${((Date.now() - started) / 1000).toFixed(0)} s; ${machineLoad()})`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Machines shared with other work drift by several times within a minute, so the bare echo runs
 * between every two scenarios (half as long) and each scenario is compared with the mean of the
 * bare runs just before and just after it.
 */
async function benchApi(engine: Engine, logger: Logger, heraldUrl: string, key: string, scenarios: ApiScenario[]): Promise<Row[]> {
  const bare = await startBare(logger);
  const run = (baseUrl: string, path: string, body: () => unknown, seconds: number, headers?: Record<string, string>) =>
    load({ baseUrl, path, body, headers, seconds, connections: CONNECTIONS, warmupSeconds: WARMUP_SECONDS });
  const runBare = () => run(bare.baseUrl, '/echo', () => BARE_BODY, Math.max(1, Math.round(SECONDS / 2)));
  try {
    const bares = [await runBare()];
    const rows: Row[] = [];
    const singleRps = new Map<string, number>();
    for (const scenario of scenarios) {
      const result = await run(heraldUrl, scenario.path, scenario.body, SECONDS, { 'x-service-api-key': key });
      bares.push(await runBare());
      const reference = (bares[bares.length - 2]!.rps + bares[bares.length - 1]!.rps) / 2;
      if (scenario.kind === 'batch') {
        // A batch is judged against its single endpoint in this run (items/s vs requests/s), not the bare echo.
        const { items, single } = scenario.batch!;
        rows.push(batchRow(engine, scenario.name, items, result, singleRps.get(single)));
      } else {
        singleRps.set(scenario.name, result.rps);
        rows.push(apiRow(engine, scenario.name, scenario.kind, result, reference));
      }
    }
    return [bareRow(bares), ...rows];
  } finally {
    await bare.close();
  }
}

/** Load average, and on Linux the share of the last minute that runnable tasks waited for a CPU. */
function machineLoad(): string {
  let pressure = '';
  try {
    const some = /some avg10=[\d.]+ avg60=([\d.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    if (some) pressure = `, CPU pressure ${Math.round(Number(some[1]))}% (time tasks waited for a core, last minute)`;
  } catch {
    // not Linux, or no PSI
  }
  return `load average ${loadavg()[0]!.toFixed(1)}${pressure}`;
}

const cpuList = cpus();
console.log(
  `Herald benchmarks: Node ${process.version}, ${cpuList.length} cores (${cpuList[0]?.model.trim() ?? 'unknown'}), ${machineLoad()}`,
);
console.log(
  `autocannon on loopback, ${CONNECTIONS} connections, ${SECONDS} s per line after ${WARMUP_SECONDS} s warm-up; Herald and the bare app run in this process.`,
);
console.log(
  `Herald: startHerald role ${ROLE}, LOG_LEVEL=warn, RATE_LIMIT_PER_SECOND=RATE_LIMIT_BURST=${RATE_LIMIT} (the per-key limit would otherwise cap the load), ` +
    `fresh account, ${CONTACTS} contacts, temp DATA_DIR.`,
);
const engines = (process.env.DATABASE_URL ? (['sqlite', 'postgres'] as Engine[]) : (['sqlite'] as Engine[])).filter(
  (e) => !process.env.BENCH_ENGINES || process.env.BENCH_ENGINES.split(',').includes(e),
);
const sink = await startSinkProcess();
try {
  for (const engine of engines) await benchEngine(engine, sink);
} finally {
  await sink.stop();
}
