/**
 * CPU per request of Herald's own work on one line, without the HTTP client in the process: the
 * requests go through Fastify's inject (routing, auth, schema, handler, serialisation; no
 * sockets), CONCURRENCY at a time, so SQLite's group commit groups them as under load. On a
 * shared machine a rate is noise; the CPU this process spent per request is not (much).
 *
 *   BENCH_LINE=lead-new|lead-restart|string-immediate|create [BENCH_ENGINES=sqlite|postgres] [DATABASE_URL=...]
 *
 * `create` is `POST /api/leads` creating a new contact with one tag (the peers harness's create);
 * the others are triggers of a campaign.
 *     node --import tsx bench/cpu-per-request.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    const body = (): unknown => {
      const n = i++;
      if (line === 'create') return { email: `new${n}-${f.run}@bench.example.com`, name: 'New Lead', tags: ['bench'] };
      if (line === 'lead-new')
        return { campaignId: f.immediateCampaignId, lead: { email: `trig${n}-${f.run}@bench.example.com`, name: 'Trigger Lead' } };
      if (line === 'lead-restart') return { campaignId: f.delayCampaignId, lead: { email: f.emails[n % f.emails.length] } };
      return { campaignId: f.immediateCampaignId, lead: f.emails[n % f.emails.length] };
    };
    const one = async () => {
      const res = await herald.app!.inject({
        method: 'POST',
        url: line === 'create' ? '/api/leads' : '/api/campaigns/trigger',
        headers: { 'x-service-api-key': f.key, 'content-type': 'application/json' },
        payload: JSON.stringify(body()),
      });
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    };
    const run = async (n: number) => {
      let left = n;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (left-- > 0) await one();
        }),
      );
    };
    // Warm-up: the JIT, prepared statements; and for restarts a pending send per contact.
    await run(2000);
    const results: string[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      await run(REQUESTS);
      const used = process.cpuUsage(cpu);
      const ms = performance.now() - start;
      results.push(`${((used.user + used.system) / REQUESTS).toFixed(0)} µs CPU/req (${(REQUESTS / (ms / 1000)).toFixed(0)} req/s)`);
    }
    console.log(`${engine} ${line}: ${results.join(', ')}`);
    // No dispatcher ran: leave no backlog for the next one on this database (a test's, a bench's).
    await clearForDispatch(herald.db, f.accountId);
  } finally {
    await herald.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
