import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import type { TestApp } from '../helpers/app.js';
import { attemptsOf, closeOpenDeliveries, deliveriesOf, makeFixture, makeWorker, startIsolatedApp } from './setup.js';

/**
 * decisions.md: loopback, private and link-local targets are refused at each delivery unless
 * WEBHOOK_ALLOW_PRIVATE is set. The app runs with it set (the receiver is on 127.0.0.1);
 * the refusing worker gets the same configuration with the switch off.
 */
let t: TestApp;
let receiver: WebhookReceiver;
before(async () => {
  t = await startIsolatedApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
});
after(() => t.close());
afterEach(async () => {
  await receiver?.close();
  await closeOpenDeliveries(t);
});

const strictWorker = () => makeWorker(t, { config: { ...t.config, webhookAllowPrivate: false } });

describe('SSRF guard at delivery time', () => {
  test('IP literals on loopback, in any spelling, are refused without connecting', async () => {
    receiver = await WebhookReceiver.start();
    const port = receiver.port;
    const urls = [
      `http://127.0.0.1:${port}/v4`,
      `http://[::1]:${port}/v6`,
      `http://[::ffff:127.0.0.1]:${port}/mapped`,
      `http://[::7f00:1]:${port}/compatible`,
      `http://[64:ff9b::7f00:1]:${port}/nat64`,
      `http://[2002:7f00:1::]:${port}/6to4`,
      `http://0x7f.0.0.1:${port}/hex`,
      `http://2130706433:${port}/decimal`,
    ];
    const f = await makeFixture(t, urls);
    assert.equal(await strictWorker().runOnce(), urls.length);

    assert.deepEqual(receiver.requests, [], 'the receiver got nothing');
    for (const row of await deliveriesOf(t, f.sendId)) {
      assert.equal(row.status, 'pending', `${row.url} is retried like any failure`);
      const [attempt] = await attemptsOf(t, row.id);
      assert.equal(attempt!.status_code, null);
      assert.match(attempt!.error!, /refused to connect to .*private or loopback address/, row.url);
    }
  });

  test('a host name that resolves to loopback (localhost) is refused at connect time', async () => {
    receiver = await WebhookReceiver.start();
    const f = await makeFixture(t, [receiver.url('/named', 'localhost')]);
    await strictWorker().runOnce();
    assert.deepEqual(receiver.requests, []);
    const [row] = await deliveriesOf(t, f.sendId);
    assert.equal(row!.status, 'pending');
    const [attempt] = await attemptsOf(t, row!.id);
    assert.match(attempt!.error!, /refused to connect to localhost: private or loopback address/);
  });

  test('with WEBHOOK_ALLOW_PRIVATE=true the same loopback URL is delivered', async () => {
    receiver = await WebhookReceiver.start();
    assert.equal(t.config.webhookAllowPrivate, true);
    const f = await makeFixture(t, [receiver.url('/ok')]);
    await makeWorker(t).runOnce();
    assert.equal(receiver.requests.length, 1);
    assert.equal((await deliveriesOf(t, f.sendId))[0]!.status, 'delivered');
  });

  test('redirects are not followed: a 302 is a failed attempt and the target gets nothing', async () => {
    receiver = await WebhookReceiver.start();
    const target = await WebhookReceiver.start();
    try {
      receiver.respondWith({ status: 302, headers: { location: target.url('/landed') } });
      const f = await makeFixture(t, [receiver.url('/redirect')]);
      await makeWorker(t).runOnce();
      const [row] = await deliveriesOf(t, f.sendId);
      assert.equal(row!.status, 'pending');
      assert.equal(row!.last_status_code, 302);
      assert.deepEqual(target.requests, []);
    } finally {
      await target.close();
    }
  });
});
