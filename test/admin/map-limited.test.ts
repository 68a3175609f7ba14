import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapLimited } from '../../src/map-limited.js';

/** mapLimited (src/map-limited.ts): the segment list's counts, a few at a time. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

test('at most the limit under way at once, each starting as soon as one is done, results in order', async () => {
  let running = 0;
  let most = 0;
  const started: number[] = [];
  const results = await mapLimited([5, 1, 3, 1, 2, 4], 2, async (n) => {
    started.push(n);
    running++;
    most = Math.max(most, running);
    for (let i = 0; i < n; i++) await tick();
    running--;
    return n * 10;
  });
  assert.deepEqual(results, [50, 10, 30, 10, 20, 40]);
  assert.equal(most, 2);
  assert.deepEqual(started, [5, 1, 3, 1, 2, 4], 'in the items order');
});

test('a failure fails the whole; an empty list answers an empty list', async () => {
  await assert.rejects(
    mapLimited([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('count failed');
      return n;
    }),
    /count failed/,
  );
  assert.deepEqual(await mapLimited([], 2, async () => 1), []);
});
