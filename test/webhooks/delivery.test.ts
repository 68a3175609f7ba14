import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { inTransaction } from '../../src/db/transaction.js';
import { RETRY_WINDOW_MS } from '../../src/webhooks/backoff.js';
import { enqueueWebhookDeliveries, webhookMessageId } from '../../src/webhooks/enqueue.js';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import type { TestApp } from '../helpers/app.js';
import { captureLogger } from '../helpers/harness.js';
import { attemptsOf, closeOpenDeliveries, deliveriesOf, makeFixture, makeWorker, startIsolatedApp } from './setup.js';

let t: TestApp;
let receiver: WebhookReceiver;
before(async () => {
  t = await startIsolatedApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
});
after(() => t.close());
// A fresh receiver per test: a row some earlier test left behind can only reach a closed port.
const freshReceiver = async () => (receiver = await WebhookReceiver.start());
afterEach(async () => {
  await receiver?.close();
  await closeOpenDeliveries(t);
});

const headersOf = (h: Record<string, unknown>) => h as Record<string, string>;

describe('webhook payload and signature', () => {
  test('the receiver verifies the Standard Webhooks signature and gets the exact payload of decisions.md', async () => {
    await freshReceiver();
    const f = await makeFixture(t, [receiver.url('/hook?token=abc')]);
    const { logger, lines } = captureLogger();
    assert.equal(await makeWorker(t, { logger }).runOnce(), 1);

    assert.equal(receiver.requests.length, 1);
    const req = receiver.requests[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/hook?token=abc');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers['user-agent'], 'Herald-Webhooks/1');
    assert.equal(req.headers['webhook-id'], webhookMessageId(f.deliveries[0]!.id));
    assert.match(String(req.headers['webhook-id']), /^msg_[0-9a-z]+$/);
    assert.match(String(req.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    assert.match(String(req.headers['webhook-timestamp']), /^\d{10}$/);

    // Verified by the reference library, exactly as a customer would.
    const verified = new Webhook(f.secret).verify(req.body.toString('utf8'), headersOf(req.headers));
    const expected = {
      type: 'campaign.sent',
      timestamp: new Date(f.enqueuedAt).toISOString(),
      data: {
        campaignId: f.campaignId,
        sendId: f.sendId,
        contact: {
          id: f.contact.id,
          name: 'Ada Lövelace',
          emails: f.contact.emails,
          phones: f.contact.phones,
          tags: ['vip-client'],
          fields: { City: 'Paris' },
          kpis: { orders: 3 },
          metadata: { plan: 'gold', referrer: null },
        },
      },
    };
    assert.deepEqual(verified, expected);
    assert.deepEqual(Object.keys(verified as object), ['type', 'timestamp', 'data']);
    assert.equal(req.body.toString('utf8'), f.deliveries[0]!.payload, 'the stored bytes are the bytes sent');

    const [row] = await deliveriesOf(t, f.sendId);
    assert.equal(row!.status, 'delivered');
    assert.equal(row!.lease_until, null);
    const attempts = await attemptsOf(t, row!.id);
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0]!.status_code, 200);
    assert.equal(attempts[0]!.error, null);

    const logged = lines.join('');
    assert.ok(logged.includes(row!.id), 'the delivery is logged');
    for (const secretText of [f.secret, f.secret.slice(6), String(req.headers['webhook-signature']).slice(3), 'token=abc']) {
      assert.ok(!logged.includes(secretText), 'no secret, signature or URL token in the logs');
    }
    const stored = JSON.stringify(
      await t.db.kysely.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', row!.id).execute(),
    );
    assert.ok(!stored.includes(String(req.headers['webhook-signature']).slice(3)), 'attempt log holds no signature');
  });

  test('a tampered body, id or another secret fails verification', async () => {
    await freshReceiver();
    const f = await makeFixture(t, [receiver.url()]);
    await makeWorker(t).runOnce();
    const req = receiver.requests[0]!;
    const body = req.body.toString('utf8');
    const headers = headersOf(req.headers);
    assert.doesNotThrow(() => new Webhook(f.secret).verify(body, headers));
    assert.throws(() => new Webhook(f.secret).verify(body.replace('Ada', 'Eve'), headers), WebhookVerificationError);
    assert.throws(() => new Webhook(f.secret).verify(body, { ...headers, 'webhook-id': 'msg_other' }), WebhookVerificationError);
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(body, headers), WebhookVerificationError);
  });

  test('one delivery per URL, each with its own message id, in the campaign order', async () => {
    await freshReceiver();
    const f = await makeFixture(t, [receiver.url('/a'), receiver.url('/b'), receiver.url('/c')]);
    assert.deepEqual(
      f.deliveries.map((d) => [d.position, d.url, d.status, d.next_attempt_at]),
      ['/a', '/b', '/c'].map((p, i) => [i, receiver.url(p), 'pending', f.enqueuedAt]),
    );
    await makeWorker(t).runOnce();
    assert.deepEqual(receiver.requests.map((r) => r.url).sort(), ['/a', '/b', '/c']);
    assert.equal(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 3);
  });

  test('a worker taking one at a time delivers equally due URLs in the campaign order', async () => {
    await freshReceiver();
    const paths = ['/z', '/y', '/x', '/w', '/v'];
    await makeFixture(
      t,
      paths.map((p) => receiver.url(p)),
    );
    const worker = makeWorker(t, { concurrency: 1 });
    for (const _ of paths) assert.equal(await worker.runOnce(), 1);
    assert.deepEqual(
      receiver.requests.map((r) => r.url),
      paths,
    );
  });
});

describe('enqueue is part of the send transaction', () => {
  test('enqueuing the same send again adds nothing (unique send and position)', async () => {
    await freshReceiver();
    const f = await makeFixture(t, [receiver.url('/1'), receiver.url('/2')]);
    await inTransaction(t.db, (tx) =>
      enqueueWebhookDeliveries(tx, { ...f, urls: [receiver.url('/1'), receiver.url('/2')], now: Date.now() }),
    );
    assert.deepEqual(
      (await deliveriesOf(t, f.sendId)).map((d) => d.id),
      f.deliveries.map((d) => d.id),
    );
  });

  test('a rolled-back send transaction leaves no delivery', async () => {
    await freshReceiver();
    const f = await makeFixture(t, []);
    await assert.rejects(
      inTransaction(t.db, async (tx) => {
        await enqueueWebhookDeliveries(tx, { ...f, urls: [receiver.url()], now: Date.now() });
        throw new Error('the send could not be marked sent');
      }),
      /could not be marked sent/,
    );
    assert.deepEqual(await deliveriesOf(t, f.sendId), []);
  });
});

describe('retries', () => {
  test('500 then 200: retried after the backoff with the same webhook-id, both attempts logged', async () => {
    await freshReceiver();
    receiver.respondWith(500);
    let clock = Date.now();
    const f = await makeFixture(t, [receiver.url()], { now: clock });
    const worker = makeWorker(t, { now: () => clock });

    await worker.runOnce();
    let [row] = await deliveriesOf(t, f.sendId);
    assert.equal(row!.status, 'pending');
    assert.equal(row!.last_status_code, 500);
    assert.ok(row!.next_attempt_at > clock, 'the retry waits');
    assert.equal(await worker.runOnce(), 0, 'not due before its time');

    clock = row!.next_attempt_at;
    await worker.runOnce();
    [row] = await deliveriesOf(t, f.sendId);
    assert.equal(row!.status, 'delivered');
    assert.equal(row!.attempts, 2);
    assert.equal(receiver.requests.length, 2);
    assert.equal(receiver.requests[0]!.headers['webhook-id'], receiver.requests[1]!.headers['webhook-id']);
    assert.deepEqual(receiver.requests[0]!.body, receiver.requests[1]!.body);
    assert.deepEqual(
      (await attemptsOf(t, row!.id)).map((a) => [a.status_code, a.error]),
      [
        [500, null],
        [200, null],
      ],
    );
  });

  test('no answer within the timeout is a failed attempt', async () => {
    await freshReceiver();
    receiver.respondWith({ status: 200, delayMs: 3_000 });
    const f = await makeFixture(t, [receiver.url()]);
    const started = Date.now();
    await makeWorker(t, { fetchTimeoutMs: 200 }).runOnce();
    assert.ok(Date.now() - started < 2_500, 'the worker did not wait for the slow answer');
    const [row] = await deliveriesOf(t, f.sendId);
    assert.equal(row!.status, 'pending');
    const [attempt] = await attemptsOf(t, row!.id);
    assert.equal(attempt!.status_code, null);
    assert.match(attempt!.error!, /no answer within 200 ms/);
    assert.ok(attempt!.duration_ms >= 150 && attempt!.duration_ms < 2_500, `duration ${attempt!.duration_ms}`);
  });

  test('backoff grows and keeps retrying for 24 hours from the first attempt, then the delivery is failed', async () => {
    await freshReceiver();
    receiver.respondWith(...Array<number>(40).fill(503));
    // A clock in the past: the worker then only claims rows that are due anyway.
    const first = Date.now() - 2 * RETRY_WINDOW_MS;
    let clock = first;
    const f = await makeFixture(t, [receiver.url()], { now: first });
    const worker = makeWorker(t, { now: () => clock });
    const id = f.deliveries[0]!.id;

    let row = f.deliveries[0]!;
    for (let i = 0; i < 40 && row.status !== 'failed'; i++) {
      clock = row.next_attempt_at;
      assert.equal(await worker.runOnce(), 1);
      [row] = (await deliveriesOf(t, f.sendId)) as [typeof row];
    }
    assert.equal(row.status, 'failed');
    const times = (await attemptsOf(t, id)).map((a) => a.attempted_at);
    assert.equal(times[0], first);
    const gaps = times.slice(1).map((at, i) => at - times[i]!);
    assert.ok(gaps.length >= 8, `retried ${gaps.length} times`);
    assert.ok(gaps[0]! >= 5_000, 'the first retry is not immediate');
    assert.ok(gaps[1]! > gaps[0]! && gaps[2]! > gaps[1]!, 'exponential backoff');
    assert.ok(
      times.slice(0, -1).every((at) => at < first + RETRY_WINDOW_MS),
      'every earlier attempt left the delivery pending',
    );
    assert.ok(times.at(-1)! >= first + RETRY_WINDOW_MS, 'failed only after 24 hours of attempts');
    assert.ok(times.at(-1)! - first < RETRY_WINDOW_MS + 3_600_000, 'and not much later');
    assert.equal(receiver.requests.length, times.length);
    clock = first + 3 * RETRY_WINDOW_MS;
    assert.equal(await worker.runOnce(), 0, 'a failed delivery is never tried again');
  });
});

describe('leases', () => {
  test('a delivery whose lease ran out (worker died) is claimed again; a live lease is left alone', async () => {
    await freshReceiver();
    const now = Date.now();
    const f = await makeFixture(t, [receiver.url('/dead'), receiver.url('/alive')], { now });
    const [dead, alive] = f.deliveries;
    await t.db.kysely
      .updateTable('webhook_deliveries')
      .set({ status: 'delivering', attempts: 1, lease_until: now - 1 })
      .where('id', '=', dead!.id)
      .execute();
    await t.db.kysely
      .updateTable('webhook_deliveries')
      .set({ status: 'delivering', attempts: 1, lease_until: now + 60_000 })
      .where('id', '=', alive!.id)
      .execute();

    assert.equal(await makeWorker(t, { now: () => now }).runOnce(), 1);
    const rows = await deliveriesOf(t, f.sendId);
    assert.deepEqual(
      rows.map((r) => [r.status, r.attempts]),
      [
        ['delivered', 2],
        ['delivering', 1],
      ],
    );
    assert.deepEqual(
      receiver.requests.map((r) => r.url),
      ['/dead'],
    );
  });

  test('a worker overtaken after its lease ran out logs its attempt but does not decide the outcome', async () => {
    await freshReceiver();
    receiver.respondWith({ status: 500, delayMs: 300 });
    const f = await makeFixture(t, [receiver.url()]);
    const id = f.deliveries[0]!.id;
    const slow = makeWorker(t).runOnce();
    while (receiver.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    // Meanwhile the lease ran out and another worker claimed the row again (its attempt is under way).
    const lease = Date.now() + 60_000;
    await t.db.kysely
      .updateTable('webhook_deliveries')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), lease_until: lease }))
      .where('id', '=', id)
      .execute();
    await slow;
    const [row] = await deliveriesOf(t, f.sendId);
    assert.deepEqual(
      [row!.status, row!.attempts, row!.lease_until, row!.last_status_code],
      ['delivering', 2, lease, null],
      'the late 500 left the new claim alone',
    );
    assert.deepEqual(
      (await attemptsOf(t, id)).map((a) => a.status_code),
      [500],
      'but the attempt it made is logged',
    );
  });
});

describe('the background loop', () => {
  test('notify() delivers at once, and stop() lets the in-flight delivery finish', async () => {
    await freshReceiver();
    receiver.respondWith({ status: 204, delayMs: 400 });
    // Idle sleeps far longer than the test: only notify() can explain a prompt delivery.
    const worker = makeWorker(t, { idleMaxMs: 60_000 });
    worker.start();
    try {
      // Let the loop go idle first, so the delivery below depends on notify().
      await new Promise((r) => setTimeout(r, 100));
      const f = await makeFixture(t, [receiver.url()]);
      const notified = Date.now();
      worker.notify();
      while (receiver.requests.length === 0 && Date.now() - notified < 5_000) await new Promise((r) => setTimeout(r, 5));
      assert.equal(receiver.requests.length, 1, 'picked up without waiting for the idle timer');
      await worker.stop();
      const [row] = await deliveriesOf(t, f.sendId);
      assert.equal(row!.status, 'delivered', 'stop waited for the answer and recorded it');
      assert.equal(row!.last_status_code, 204);
    } finally {
      await worker.stop();
    }
  });

  test('a delivery enqueued by another process (no notify) is found by the idle poll', async () => {
    await freshReceiver();
    const worker = makeWorker(t, { idleMaxMs: 300 });
    worker.start();
    try {
      await new Promise((r) => setTimeout(r, 100));
      const f = await makeFixture(t, [receiver.url()]);
      const deadline = Date.now() + 3_000;
      while ((await deliveriesOf(t, f.sendId))[0]!.status !== 'delivered' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      assert.equal((await deliveriesOf(t, f.sendId))[0]!.status, 'delivered');
    } finally {
      await worker.stop();
    }
  });
});
