/**
 * Two builds of Herald on PostgreSQL side by side, the harness's HTTP lines interleaved in short
 * rounds (A, B, then B, A, …), so both see the machine in the same state: CPU per request of the
 * API process and of the database server, and each round's rate. For a change whose effect is
 * smaller than the minute-to-minute noise of harness-lines.mjs run once per build.
 *
 *   node bench/harness-ab.mjs <dirA>,<dirB> [lines]
 *     dirs: Herald checkouts, each built (`npm run build`); lines: create,update,immediate,known,delay,cancel
 *     (known: an immediate trigger with a `lead` object of a seeded contact; not a harness line)
 *     env: ROUNDS (6), SEC (3 s a round), CONN (10 connections), ANALYZE (set: ANALYZE after seeding)
 *
 * Each build gets a fresh database (provisioned with its CLI like the harness: a pro account, an
 * immediate and a 300 s delay email campaign) and its own `serve --role api`; 1,000 contacts are
 * seeded, and each line is warmed up 2 s per build before its rounds. The server's CPU is that of
 * every postgres process: only one build is loaded at a time. Use it on an otherwise quiet machine.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMicros, freePort, heraldEnv, pgQuery, provisionHerald } from './harness-common.mjs';

const dirs = (process.argv[2] ?? '').split(',').filter(Boolean);
const lines = (process.argv[3] ?? 'immediate,delay').split(',');
if (dirs.length === 0) throw new Error('usage: node bench/harness-ab.mjs <dirA>,<dirB> [lines]');
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const SEC = Number(process.env.SEC ?? 3);
const CONN = Number(process.env.CONN ?? 10);
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const query = (database, text) => pgQuery(`${PG_URL}/${database}`, text);

async function startBuild(dir, i) {
  const database = `herald_ab_${process.pid}_${i}`;
  await query('postgres', `create database ${database}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-ab-'));
  const env = heraldEnv(dataDir, `${PG_URL}/${database}`);
  const { key, immediateId, delayId } = provisionHerald(dir, env);
  const port = await freePort();
  const api = spawn(process.execPath, ['bin/herald', 'serve', '--role', 'api'], {
    cwd: dir,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let k = 0; k < 100; k++) {
    try {
      await fetch(`${url}/healthz`);
      break;
    } catch {
      await sleep(100);
    }
  }
  const tag = randomBytes(3).toString('hex');
  const build = {
    dir,
    database,
    dataDir,
    api,
    url,
    key,
    immediateId,
    delayId,
    n: 0,
    tag,
    seeded: Array.from({ length: 1000 }, (_, j) => `lead${j}-${tag}@bench.example.com`),
    stats: {},
  };
  const headers = { 'x-service-api-key': key, 'content-type': 'application/json' };
  for (let j = 0; j < build.seeded.length; j += 10) {
    await Promise.all(
      build.seeded
        .slice(j, j + 10)
        .map((email) =>
          fetch(`${url}/api/leads`, { method: 'POST', headers, body: JSON.stringify({ email, name: 'Lead' }) }).then((r) => r.text()),
        ),
    );
  }
  if (process.env.ANALYZE) await query(database, 'analyze');
  return build;
}

/** A request of the line for the build, as the harness sends it. */
function request(build, line) {
  const n = build.n++;
  const email = (prefix) => `${prefix}${n}-${build.tag}@bench.example.com`;
  const seededOne = build.seeded[n % build.seeded.length];
  switch (line) {
    case 'create':
      return ['/api/leads', { email: email('new'), name: 'New Lead', tags: ['bench'] }];
    case 'update':
      return ['/api/leads', { email: seededOne, tags: [`wave ${n % 5}`] }];
    case 'immediate':
      return ['/api/campaigns/trigger', { campaignId: build.immediateId, lead: { email: email('trig'), name: 'Trigger Lead' } }];
    case 'known':
      return ['/api/campaigns/trigger', { campaignId: build.immediateId, lead: { email: seededOne } }];
    case 'delay':
      return ['/api/campaigns/trigger', { campaignId: build.delayId, lead: { email: seededOne } }];
    case 'cancel':
      return ['/api/campaigns/cancel', { campaignId: build.delayId, lead: seededOne }];
    default:
      throw new Error(`unknown line '${line}'`);
  }
}

const load = (build, line, seconds) =>
  new Promise((done, fail) => {
    const headers = { 'x-service-api-key': build.key, 'content-type': 'application/json' };
    const spec = {
      method: 'POST',
      path: request(build, line)[0],
      headers,
      setupRequest: (r) => ({ ...r, body: JSON.stringify(request(build, line)[1]) }),
    };
    autocannon({ url: build.url, connections: CONN, duration: seconds, requests: [spec] }, (err, result) =>
      err ? fail(err) : done(result),
    );
  });

const serverCpu = () => cpuMicros((_pid, stat) => stat.includes('(postgres)'));
const builds = [];
try {
  for (const [i, dir] of dirs.entries()) builds.push(await startBuild(dir, i));
  for (const line of lines) {
    for (const build of builds) {
      await load(build, line, 2);
      build.stats[line] = { requests: 0, api: 0, server: 0, rates: [] };
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const build of round % 2 ? [...builds].reverse() : builds) {
        const apiCpu = () => cpuMicros((pid) => Number(pid) === build.api.pid);
        const [api0, server0] = [apiCpu(), serverCpu()];
        const result = await load(build, line, SEC);
        const s = build.stats[line];
        s.requests += result.requests.total;
        s.api += apiCpu() - api0;
        s.server += serverCpu() - server0;
        s.rates.push(Math.round(result.requests.average));
      }
    }
    for (const build of builds) {
      const s = build.stats[line];
      const per = (micros) => Math.round(micros / s.requests);
      console.log(
        `${line.padEnd(9)} ${build.dir}: API ${per(s.api)} + server ${per(s.server)} = ${per(s.api + s.server)} µs/request; req/s ${s.rates.join(' ')}`,
      );
    }
  }
} finally {
  for (const build of builds) build.api.kill('SIGTERM');
  await sleep(1500);
  for (const build of builds) {
    await query('postgres', `drop database ${build.database} with (force)`);
    rmSync(build.dataDir, { recursive: true, force: true });
  }
}
