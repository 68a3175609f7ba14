import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/harness.js';
import { startHeraldProcess, type WorkerProcess } from '../helpers/processes.js';
import { makeUser, PASSWORD } from './helpers.js';

/**
 * The sign-in count holds across API processes: two `herald serve --role api` on one database
 * (the SQLite file of the test app, or the PostgreSQL of DATABASE_URL), 200 concurrent wrong
 * passwords for one email spread over both, real HTTP. Each run signs in from its own
 * loopback address (127.x.y.z) so its address count is its own on a shared database.
 */
let t: TestApp;
let servers: { process: WorkerProcess; port: number }[] = [];
before(async () => {
  t = await startTestApp();
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const env = {
      DATA_DIR: t.config.dataDir,
      HERALD_SECRET: t.config.secret,
      DATABASE_URL: t.config.databaseUrl ?? '',
      PORT: String(port),
    };
    servers.push({ process: startHeraldProcess('api', env), port });
  }
  await Promise.all(servers.map((s) => untilListening(s.port, s.process)));
});
after(async () => {
  await Promise.all(servers.map((s) => s.process.stop()));
  servers = [];
  await t.close();
});

const octet = () => 1 + Math.floor(Math.random() * 254);

test('200 concurrent wrong passwords for one email over two API processes: 5 are checked, 195 answer 429', async () => {
  const user = await makeUser(t);
  const from = `127.${octet()}.${octet()}.${octet()}`;
  const statuses = await Promise.all(Array.from({ length: 200 }, (_, i) => signIn(servers[i % 2]!.port, from, user.email, `wrong ${i}`)));
  assert.equal(statuses.filter((s) => s === 401).length, 5, `statuses: ${JSON.stringify(count(statuses))}`);
  assert.equal(statuses.filter((s) => s === 429).length, 195);
  // The right password is refused too while the window lasts, on either process.
  assert.equal(await signIn(servers[0]!.port, `127.${octet()}.${octet()}.${octet()}`, user.email, PASSWORD), 429);
  assert.equal(await signIn(servers[1]!.port, `127.${octet()}.${octet()}.${octet()}`, user.email, PASSWORD), 429);
});

test('100 concurrent sign-ins for 100 emails from one address over two API processes: 5 are checked', async () => {
  const from = `127.${octet()}.${octet()}.${octet()}`;
  const statuses = await Promise.all(
    Array.from({ length: 100 }, (_, i) => signIn(servers[i % 2]!.port, from, `nobody-${i}-${octet()}@example.com`, 'wrong')),
  );
  assert.deepEqual(count(statuses), { 401: 5, 429: 95 });
});

function count(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

function signIn(port: number, localAddress: string, email: string, password: string): Promise<number> {
  const body = JSON.stringify({ email, password });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        method: 'POST',
        path: '/admin/api/login',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Polls until the process answers HTTP (any status), or fails with its output if it exits. */
async function untilListening(port: number, child: WorkerProcess): Promise<void> {
  for (;;) {
    if (child.child.exitCode !== null) throw new Error(`herald exited: ${child.output()}`);
    const answered = await new Promise<boolean>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/admin/api/session', agent: false }, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
    });
    if (answered) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
