/**
 * What bench/harness-lines.mjs and bench/harness-ab.mjs share: the CPU of processes read from
 * /proc, a statement on a PostgreSQL database of the local server, and Herald provisioned with its
 * CLI as the peers harness provisions it (../shared/peers/run.mjs).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import pg from 'pg';

/** CPU time (µs) of the processes whose /proc/<pid>/stat matches. */
export function cpuMicros(match) {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!match(pid, stat)) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * 10_000; // utime + stime, in 10 ms ticks
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/** Runs `text` on the database at `url` (a connection of its own). */
export async function pgQuery(url, text) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const CONTENT = [
  '--from',
  'Bench <bench@example.com>',
  '--subject',
  'Hello {{ name }}',
  '--html',
  '<p>Hi {{ name }}</p>',
  '--text',
  'Hi {{ name }}',
];

/**
 * Provisions the Herald at `dir` with its CLI, like the harness: a pro account without allowance,
 * an all-scopes key, an immediate and a 300 s delay email campaign, both active.
 */
export function provisionHerald(dir, env) {
  const cli = (...args) => JSON.parse(execFileSync(process.execPath, ['bin/herald', ...args], { env, cwd: dir }).toString());
  const account = cli('account', 'create', '--name', 'Bench', '--plan', 'pro', '--allowance', 'none').id;
  const key = cli(
    'key',
    'create',
    '--account',
    account,
    '--name',
    'bench',
    '--scopes',
    'leads:write,leads:read,events:write,campaigns:trigger',
  ).key;
  const campaign = (name, ...more) =>
    cli('campaign', 'create', '--account', account, '--name', name, '--channel', 'email', ...more, ...CONTENT, '--activate').id;
  return {
    key,
    immediateId: campaign('Bench immediate', '--mode', 'immediate'),
    delayId: campaign('Bench delay', '--mode', 'delay', '--delay', '300'),
  };
}

/** Herald's environment for a bench run: quiet logs, no rate limit, its own data folder and secret. */
export function heraldEnv(dataDir, databaseUrl) {
  return {
    ...process.env,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    DATA_DIR: dataDir,
    HERALD_SECRET: randomBytes(32).toString('base64url'),
    DATABASE_URL: databaseUrl,
  };
}

/** A port nobody listens on right now, asked of the OS (test/helpers/harness.ts has the same for TypeScript). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
