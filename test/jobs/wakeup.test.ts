import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { pgNotify } from '../../src/db/notify.js';
import { listenThroughDatabase, notifyThroughDatabase, WAKEABLE_WORKER_IDLE_POLL_MS } from '../../src/jobs/wakeup.js';
import { uniq } from '../helpers/factories.js';

/**
 * Wake-ups from an API process to worker processes on PostgreSQL (src/jobs/wakeup.ts): a burst
 * of triggers costs a few NOTIFYs, not one each, yet the last of them is always followed by
 * one; a send due beyond the worker's idle poll wakes nobody; a listener hears when to look.
 */
const url = process.env.DATABASE_URL;
const skip = url ? false : 'PostgreSQL only (DATABASE_URL)';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('wake-ups through PostgreSQL', { skip }, () => {
  let dataDir: string;
  let db: Db;
  let listener: pg.Client;
  const channel = uniq('wake_');
  const received: string[] = [];
  const silent = { warn: () => undefined };
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'herald-wakeup-'));
    db = await openDatabase({ dataDir, databaseUrl: url });
    listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (n) => received.push(n.payload ?? ''));
    await listener.query(`listen ${pg.escapeIdentifier(channel)}`);
  });
  after(async () => {
    await listener.end();
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Waits until no notification has arrived for a while. */
  const settle = async () => {
    let seen = -1;
    while (seen !== received.length) {
      seen = received.length;
      await sleep(100);
    }
  };

  test('a burst of wake-ups sends a few NOTIFYs, the last one after the last call', async () => {
    received.length = 0;
    const wake = notifyThroughDatabase(db, channel, silent);
    const now = Date.now();
    for (let i = 0; i < 200; i++) wake(now + i);
    await settle();
    assert.ok(received.length >= 1 && received.length <= 3, `200 calls in one turn: ${received.length} NOTIFYs`);
    assert.equal(received[0], String(now), 'the first call is sent at once');
    // The calls made while the first was on its way share one more, with the earliest due time.
    if (received.length > 1) assert.equal(received[1], String(now + 1));
  });

  test('wake-ups spread over time are coalesced to at most one per 10 ms', async () => {
    received.length = 0;
    const wake = notifyThroughDatabase(db, channel, silent);
    const started = Date.now();
    let calls = 0;
    while (Date.now() - started < 200) {
      wake(Date.now());
      calls++;
      await sleep(1);
    }
    await settle();
    assert.ok(received.length >= 2, `some NOTIFYs went: ${received.length}`);
    assert.ok(received.length <= 200 / 10 + 2, `${calls} calls over 200 ms sent ${received.length} NOTIFYs`);
    assert.ok(received.length < calls);
  });

  test('a send due beyond the idle poll of the workers wakes nobody; one due sooner does', async () => {
    received.length = 0;
    const now = 1_000_000;
    const wake = notifyThroughDatabase(db, channel, silent, () => now);
    wake(now + WAKEABLE_WORKER_IDLE_POLL_MS + 1_001);
    wake(now + 300_000);
    await settle();
    assert.deepEqual(received, []);
    wake(now + WAKEABLE_WORKER_IDLE_POLL_MS);
    await settle();
    assert.deepEqual(received, [String(now + WAKEABLE_WORKER_IDLE_POLL_MS)]);
  });

  test('a listener hears the due time a NOTIFY names; nothing for a payload naming none, and on connecting', async () => {
    const heard: (number | undefined)[] = [];
    const own = uniq('heard_');
    const listening = listenThroughDatabase(url!, own, (at) => heard.push(at), silent);
    try {
      // The connect's own wake-up (look now) says the listener is in place.
      while (heard.length === 0) await sleep(10);
      const wake = notifyThroughDatabase(db, own, silent);
      const dueAt = Date.now() + 2_000;
      wake(dueAt);
      await sleep(50);
      await pgNotify(db, own, 'not a time');
      while (heard.length < 3) await sleep(10);
      assert.deepEqual(heard, [undefined, dueAt, undefined]);
    } finally {
      await listening.close();
    }
  });
});
