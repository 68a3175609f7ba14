import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import { makeEmailCampaign, makeTenant, randomEmail } from '../helpers/factories.js';
import { freePort, openTestDatabase, processEnv, type TestDatabase } from '../helpers/harness.js';
import { eventually } from '../helpers/herald.js';
import { startHeraldProcess, type WorkerProcess } from '../helpers/processes.js';
import { countContactsWithEmail, sendIds } from './helpers.js';

/**
 * The case of issue 10: a trigger reached Herald and was committed, but its answer was lost
 * (the client dropped the connection, the process was killed with SIGKILL before anyone read
 * the answer). After a restart on the same data, the retry with the same key answers the
 * original `queued` answer (not `rejected`), marked as replayed, and nothing more is written.
 * Real `bin/herald` processes (the compiled build: `npm run build` first), both engines.
 */

let t: TestDatabase;
let current: WorkerProcess | undefined;
before(async () => {
  t = await openTestDatabase();
});
after(async () => {
  await current?.kill('SIGKILL').catch(() => undefined);
  await t.close();
});

async function startApi(port: number): Promise<WorkerProcess> {
  const child = startHeraldProcess('api', { ...processEnv(t), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
  await eventually(
    async () => {
      if (child.child.exitCode !== null) throw new Error(`herald exited: ${child.output()}`);
      return fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
    },
    20_000,
    'the API process to be ready',
  );
  return child;
}

/** Sends the request and never reads the answer: the connection is dropped once `committed()` says the effect is in. */
async function sendAndDropTheAnswer(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: unknown,
  committed: () => Promise<boolean>,
) {
  const payload = JSON.stringify(body);
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    path,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      ...headers,
    },
  });
  req.on('error', () => undefined);
  req.on('response', (res) => res.destroy());
  req.end(payload);
  await eventually(committed, 10_000, 'the effect to be committed');
  req.destroy();
}

test('a trigger committed whose answer was lost: after kill -9 and a restart, the retry replays `queued`, and nothing is sent twice', {
  timeout: 90_000,
}, async () => {
  const tenant = await makeTenant(t.db, t.config, { allowance: null });
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const port = await freePort();
  current = await startApi(port);

  const email = randomEmail();
  const body = { campaignId, lead: { email, name: 'Ada Lovelace' } };
  const key = randomUUID();
  await sendAndDropTheAnswer(
    port,
    '/api/campaigns/trigger',
    { 'x-service-api-key': tenant.key, 'idempotency-key': key },
    body,
    async () => (await sendIds(t.db, tenant.accountId, campaignId)).length === 1,
  );
  await current.kill('SIGKILL');
  current = await startApi(port);

  const retry = await fetch(`http://127.0.0.1:${port}/api/campaigns/trigger`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-api-key': tenant.key, 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  const answer = await retry.json();
  const sends = await sendIds(t.db, tenant.accountId, campaignId);
  assert.equal(retry.status, 200, JSON.stringify(answer));
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(answer, { campaignId, leadId: answer.leadId, mode: 'immediate', sendId: sends[0], status: 'queued' });
  assert.equal(sends.length, 1, 'one send');
  assert.equal(await countContactsWithEmail(t.db, tenant.accountId, email), 1, 'one contact');

  // The same key with another body is still refused after the restart.
  const other = await fetch(`http://127.0.0.1:${port}/api/campaigns/trigger`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-api-key': tenant.key, 'idempotency-key': key },
    body: JSON.stringify({ ...body, lead: { email: randomEmail(), name: 'Bob' } }),
  });
  assert.equal(other.status, 422);
  assert.equal(await other.json().then((b) => b.message), 'Idempotency-Key was used with a different request');

  assert.equal(await current.stop(), 0, 'the restarted process stops cleanly');
  current = undefined;
});
