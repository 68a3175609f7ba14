import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/db/connect.js';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import type { TestApp } from '../helpers/app.js';
import { deliveriesOf, makeFixture, makeWorker, startIsolatedApp } from './setup.js';

/** Several workers (processes, machines) share the deliveries through PostgreSQL's SKIP LOCKED claim. */
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

test('two workers on PostgreSQL deliver each of N deliveries exactly once', {
  skip: !process.env.DATABASE_URL && 'PostgreSQL only (DATABASE_URL unset)',
}, async () => {
  // Each worker on its own connection pool, as two processes would be.
  const otherDb = await openDatabase(t.config, { poolSize: 4 });
  try {
    const sends = await Promise.all(
      Array.from({ length: 10 }, () => makeFixture(t, [receiver.url('/1'), receiver.url('/2'), receiver.url('/3')])),
    );
    const ids = sends.flatMap((s) => s.deliveries.map((d) => d.id));
    // Slow answers keep claims overlapping.
    receiver.respondWith(...ids.map(() => ({ status: 200, delayMs: 20 })));

    const workers = [makeWorker(t, { concurrency: 3 }), makeWorker(t, { db: otherDb, concurrency: 3 })];
    const claimed = [0, 0];
    await Promise.all(
      workers.map(async (worker, i) => {
        for (let n = await worker.runOnce(); n > 0; n = await worker.runOnce()) claimed[i]! += n;
      }),
    );

    const perMessage = new Map<string, number>();
    for (const r of receiver.requests)
      perMessage.set(String(r.headers['webhook-id']), (perMessage.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    assert.equal(receiver.requests.length, ids.length, `claimed ${claimed.join(' + ')}`);
    assert.ok(
      [...perMessage.values()].every((n) => n === 1),
      'no message twice',
    );
    assert.equal(perMessage.size, ids.length);
    for (const s of sends) {
      assert.deepEqual(
        (await deliveriesOf(t, s.sendId)).map((d) => [d.status, d.attempts]),
        [
          ['delivered', 1],
          ['delivered', 1],
          ['delivered', 1],
        ],
      );
    }
    assert.ok(claimed[0]! > 0 && claimed[1]! > 0, `both workers took a share: ${claimed.join(' + ')}`);
  } finally {
    await otherDb.close();
  }
});
