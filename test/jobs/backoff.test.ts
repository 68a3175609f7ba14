import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SEND_RETRY } from '../../src/dispatcher/dispatcher.js';
import { doublingDelays, retryAt, retryDelay } from '../../src/jobs/backoff.js';
import { RETRY_DELAYS_MS, RETRY_WINDOW_MS, WEBHOOK_RETRY } from '../../src/webhooks/backoff.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe('the one backoff rule, with each queue schedule', () => {
  test('sends: 5 s doubling, capped at 30 min, spread ±20%', () => {
    const low = () => 0;
    const high = () => 1 - Number.EPSILON;
    const mid = () => 0.5;
    const expected = [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 30 * MIN, 30 * MIN];
    expected.forEach((delay, i) => {
      assert.equal(retryDelay(SEND_RETRY, i + 1, mid), delay, `after failure ${i + 1}`);
      assert.equal(retryDelay(SEND_RETRY, i + 1, low), Math.round(delay * 0.8));
      assert.ok(retryDelay(SEND_RETRY, i + 1, high) <= Math.round(delay * 1.2));
    });
  });

  test('sends: given up once the attempts run out', () => {
    const schedule = { ...SEND_RETRY, maxAttempts: 3 };
    assert.notEqual(retryAt(schedule, 2, 1_000), null);
    assert.equal(retryAt(schedule, 3, 1_000), null);
  });

  test('webhooks: the documented table, the last delay repeating, no jitter', () => {
    const first = 1_000_000;
    RETRY_DELAYS_MS.forEach((delay, i) => assert.equal(retryAt(WEBHOOK_RETRY, i + 1, first, first), first + delay));
    assert.equal(retryDelay(WEBHOOK_RETRY, RETRY_DELAYS_MS.length + 5), RETRY_DELAYS_MS.at(-1));
  });

  test('webhooks: the retry past the 24-hour window is pulled in to its end, and a failure from then on is final', () => {
    const first = 5_000;
    const late = first + RETRY_WINDOW_MS - HOUR;
    assert.equal(retryAt(WEBHOOK_RETRY, 9, late, first), first + RETRY_WINDOW_MS);
    assert.equal(retryAt(WEBHOOK_RETRY, 10, first + RETRY_WINDOW_MS, first), null);
  });

  test('doubling delays stop at the cap', () => {
    assert.deepEqual(doublingDelays(200, 1_000), [200, 400, 800, 1_000]);
    assert.deepEqual(doublingDelays(1_000, 1_000), [1_000]);
  });
});
