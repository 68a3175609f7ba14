import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import type { TestApp } from '../helpers/app.js';
import { runHerald } from '../helpers/cli.js';
import { cliEnv, makeFixture, makeWorker, startIsolatedApp } from './setup.js';

/** `herald webhook deliveries` runs the compiled CLI (npm run build first) on the test app's database. */
let t: TestApp;
let receiver: WebhookReceiver;
before(async () => {
  t = await startIsolatedApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  receiver = await WebhookReceiver.start();
});
after(async () => {
  await receiver.close();
  await t.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test('herald webhook deliveries lists each delivery of a campaign with every attempt', async () => {
  let clock = Date.now();
  const f = await makeFixture(t, [receiver.url('/first'), receiver.url('/second')], { now: clock });
  receiver.respondWith(500, 200, 200);
  const worker = makeWorker(t, { now: () => clock, concurrency: 1 });
  await worker.runOnce(); // /first: 500
  await worker.runOnce(); // /second: 200
  clock += 60_000;
  await worker.runOnce(); // /first again: 200

  const result = await runHerald(['webhook', 'deliveries', '--account', f.accountId, '--campaign', f.campaignId], cliEnv(t));
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout.trim().split('\n').length, 1, 'one line of JSON');
  const items = result.json.items as any[];
  assert.equal(items.length, 2);
  const byUrl = Object.fromEntries(items.map((i) => [new URL(i.url).pathname, i]));
  const first = byUrl['/first'];
  const second = byUrl['/second'];

  assert.equal(first.id, f.deliveries[0]!.id);
  assert.match(first.messageId, /^msg_/);
  assert.deepEqual(
    receiver.requests.filter((r) => r.url === '/first').map((r) => r.headers['webhook-id']),
    [first.messageId, first.messageId],
  );
  assert.equal(first.sendId, f.sendId);
  assert.equal(first.status, 'delivered');
  assert.equal(first.nextAttemptAt, null);
  assert.equal(first.payload.data.contact.id, f.contact.id);
  assert.match(first.createdAt, ISO);
  assert.deepEqual(
    first.attempts.map((a: any) => a.statusCode),
    [500, 200],
  );
  for (const a of first.attempts) {
    assert.match(a.attemptedAt, ISO);
    assert.equal(typeof a.durationMs, 'number');
  }
  assert.ok(first.attempts[0].attemptedAt < first.attempts[1].attemptedAt, 'oldest attempt first');
  assert.equal(second.status, 'delivered');
  assert.equal(second.attempts.length, 1);
});

test("another account's campaign answers like one that does not exist", async () => {
  const mine = await makeFixture(t, []);
  const theirs = await makeFixture(t, []);
  for (const campaign of [theirs.campaignId, 'cmp_doesnotexist']) {
    const result = await runHerald(['webhook', 'deliveries', '--account', mine.accountId, '--campaign', campaign], cliEnv(t));
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /Campaign not found/);
  }
  const empty = await runHerald(['webhook', 'deliveries', '--account', mine.accountId, '--campaign', mine.campaignId], cliEnv(t));
  assert.deepEqual(empty.json, { items: [] });
});
