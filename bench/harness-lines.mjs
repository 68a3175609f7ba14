/**
 * CPU per request on the peers harness's HTTP lines (../shared/peers), one target at a time: the
 * built Herald (`npm run build` first) on SQLite or PostgreSQL, or one of the harness's peers. The
 * harness prints rates; this prints what each request cost: the API process's CPU and the database
 * server's (every `postgres` process on this machine, plus `redis-server` for the BullMQ peer),
 * read from /proc before and after each line. Use it on an otherwise quiet machine.
 *
 *   node bench/harness-lines.mjs sqlite|postgres|graphile|bullmq [lines]
 *     lines: comma-separated of create,update,immediate,known,delay,cancel (default all but known)
 *     env: PG_URL (postgres://postgres@127.0.0.1:5432), PEERS_DIR (../shared/peers), SECONDS (5),
 *          PROFILE_DIR (a --cpu-prof profile of the API process), PROFILE_INTERVAL (its sampling interval, µs; 1000)
 *
 * Like the harness: 1,000 contacts seeded, 10 connections, 1 s of warm-up then SECONDS, a bare
 * Fastify echo (the harness's own) measured before and after every line; an immediate and a 300 s
 * delay email campaign; `RATE_LIMIT_*` at 1,000,000.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { cpuMicros, freePort, heraldEnv, pgQuery, provisionHerald } from './harness-common.mjs';

const [target = 'sqlite', lineList = 'create,update,immediate,delay,cancel'] = process.argv.slice(2);
const peer = target === 'graphile' || target === 'bullmq';
const usesPostgres = target !== 'sqlite';
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const PEERS_DIR = resolve(process.env.PEERS_DIR ?? '../shared/peers');
const SECONDS = Number(process.env.SECONDS ?? 5);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const adminQuery = (text) => pgQuery(`${PG_URL}/postgres`, text);

const dataDir = mkdtempSync(join(tmpdir(), 'herald-lines-'));
const database = `herald_lines_${process.pid}`;
const env = heraldEnv(dataDir, '');
if (usesPostgres) {
  await adminQuery(`create database ${database}`);
  env.DATABASE_URL = `${PG_URL}/${database}`;
}

// Provisioned like the harness: the CLI for Herald; a peer takes its key and campaign ids as given.
let key = `pk_${randomBytes(16).toString('hex')}`;
let immediateId = 'cmp_immediate';
let delayId = 'cmp_delay';
if (!peer) ({ key, immediateId, delayId } = provisionHerald('.', env));

const port = await freePort();
const profile = process.env.PROFILE_DIR
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`, `--cpu-prof-interval=${process.env.PROFILE_INTERVAL ?? 1000}`]
  : [];
const apiArgs = peer ? [join(PEERS_DIR, target, 'server.mjs')] : ['bin/herald', 'serve', '--role', 'api'];
const peerEnv = {
  PEER_API_KEY: key,
  PEER_ACCOUNT_ID: 'acc_bench',
  PEER_QUEUE_PREFIX: `lines_${process.pid}`,
  PEER_QUEUE_NAME: 'send_http',
};
const api = spawn(process.execPath, [...profile, ...apiArgs], {
  env: { ...env, ...peerEnv, PORT: String(port) },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const bare = spawn(process.execPath, [join(PEERS_DIR, 'lib/bare.mjs')], { env: { ...env, PORT: String(port + 1) }, stdio: 'inherit' });
const url = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try {
    await fetch(`${url}/${peer ? 'health' : 'healthz'}`);
    break;
  } catch {
    await sleep(100);
  }
}

const headers = { 'x-service-api-key': key, 'content-type': 'application/json' };
const tag = randomBytes(3).toString('hex');
const seeded = Array.from({ length: 1000 }, (_, i) => `lead${i}-${tag}@bench.example.com`);
for (let i = 0; i < seeded.length; i += 10) {
  const batch = seeded.slice(i, i + 10).map((email, j) => ({ email, name: `Lead ${i + j}` }));
  await Promise.all(
    batch.map((body) => fetch(`${url}/api/leads`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.text())),
  );
}

const counters = {};
const next = (name) => {
  counters[name] = (counters[name] ?? 0) + 1;
  return counters[name] - 1;
};
const unique = (prefix) => `${prefix}${next(prefix)}-${tag}@bench.example.com`;
const seededOne = (name) => seeded[next(name) % seeded.length];
/** Each line's path and body per target, as the harness sends them. */
const LINES = {
  create: () => ['/api/leads', { email: unique('new'), name: 'New Lead', tags: ['bench'] }],
  update: () => ['/api/leads', { email: seededOne('update'), tags: [`wave ${(counters.update ?? 0) % 5}`] }],
  immediate: () =>
    peer
      ? ['/api/trigger', { campaignId: immediateId, email: unique('trig'), name: 'Trigger Lead', mode: 'immediate' }]
      : ['/api/campaigns/trigger', { campaignId: immediateId, lead: { email: unique('trig'), name: 'Trigger Lead' } }],
  // Not a harness line: an immediate trigger with a `lead` object of a known contact (re-entry off,
  // so rejected after its first send; Herald's decided-first statement writes nothing, then the usual write).
  known: () =>
    peer
      ? ['/api/trigger', { campaignId: immediateId, email: seededOne('known'), mode: 'immediate' }]
      : ['/api/campaigns/trigger', { campaignId: immediateId, lead: { email: seededOne('known') } }],
  delay: () =>
    peer
      ? ['/api/trigger', { campaignId: delayId, email: seededOne('delay'), mode: 'delay', delaySeconds: 300 }]
      : ['/api/campaigns/trigger', { campaignId: delayId, lead: { email: seededOne('delay') } }],
  cancel: () =>
    peer
      ? ['/api/cancel', { campaignId: delayId, email: seededOne('cancel') }]
      : ['/api/campaigns/cancel', { campaignId: delayId, lead: seededOne('cancel') }],
};

const load = (base, line, seconds) =>
  new Promise((done, fail) => {
    const path = line === 'echo' ? '/echo' : LINES[line]()[0];
    const request = {
      method: 'POST',
      path,
      headers,
      setupRequest: (r) => ({ ...r, body: JSON.stringify(line === 'echo' ? { email: 'a@b.c' } : LINES[line]()[1]) }),
    };
    autocannon({ url: base, connections: 10, duration: seconds, requests: [request] }, (err, result) => (err ? fail(err) : done(result)));
  });
const bareRate = async () => (await load(`http://127.0.0.1:${port + 1}`, 'echo', 3)).requests.average;
const apiCpu = () => cpuMicros((pid) => Number(pid) === api.pid);
const serverCpu = () => (usesPostgres ? cpuMicros((_pid, stat) => stat.includes('(postgres)') || stat.includes('(redis-server)')) : 0);

console.log(`${target}: req/s, % of the bare echo, CPU per request of the API process and of the database server (µs)`);
let bareBefore = await bareRate();
for (const line of lineList.split(',')) {
  if (!LINES[line]) throw new Error(`unknown line '${line}'`);
  await load(url, line, 1);
  const [api0, server0] = [apiCpu(), serverCpu()];
  const result = await load(url, line, SECONDS);
  const [api1, server1] = [apiCpu(), serverCpu()];
  const bareAfter = await bareRate();
  const n = result.requests.total;
  const ratio = (100 * result.requests.average) / ((bareBefore + bareAfter) / 2);
  const server = usesPostgres ? ` + server ${Math.round((server1 - server0) / n)}` : '';
  console.log(
    `${line.padEnd(10)} ${String(Math.round(result.requests.average)).padStart(6)} req/s  ${ratio.toFixed(1).padStart(5)}%  API ${Math.round((api1 - api0) / n)}${server} µs  non-2xx ${result.non2xx}`,
  );
  bareBefore = bareAfter;
}

api.kill('SIGTERM');
bare.kill('SIGTERM');
await sleep(1500);
if (usesPostgres) await adminQuery(`drop database ${database} with (force)`);
rmSync(dataDir, { recursive: true, force: true });
