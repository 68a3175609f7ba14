import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { COUNT_TTL_MS, expireCounts, recentCounts } from '../../src/modules/segments/segment-counts.js';

/** segment-counts.ts: the list's counts kept for a minute, and counted again longest first. */

const keysOf = (accountId: string, ids: string[]) =>
  ids.map((segmentId) => ({ accountId, segmentId, updatedAt: '2026-01-01T00:00:00.000Z', criteria: { groups: [{}] } }));

/** recentCounts with a countAll that notes the positions it is given and answers `took[position]`. */
async function countOnce(keys: ReturnType<typeof keysOf>, now: number, took: Record<number, number>) {
  const asked: number[][] = [];
  const counts = await recentCounts(keys, now, async (missing) => {
    asked.push(missing);
    return missing.map((at) => ({ count: at * 10, took: took[at] ?? 1 }));
  });
  return { asked: asked[0], counts: counts.map((c) => c.count) };
}

test('counts are kept for a minute, then counted again, the one that took longest last time first', async () => {
  const keys = keysOf(randomUUID(), ['a', 'b', 'c']);
  const now = Date.now();
  const first = await countOnce(keys, now, { 0: 5, 1: 50, 2: 20 });
  assert.deepEqual(first.asked, [0, 1, 2], 'never counted: in the list order');
  assert.deepEqual(first.counts, [0, 10, 20]);
  assert.equal((await countOnce(keys, now + COUNT_TTL_MS - 1, {})).asked, undefined, 'kept within the minute');

  const later = await countOnce(keys, now + COUNT_TTL_MS, { 0: 30, 1: 1, 2: 2 });
  assert.deepEqual(later.asked, [1, 2, 0], 'longest first, as they took');
  assert.deepEqual(later.counts, [0, 10, 20], 'each answer in its own place');

  expireCounts();
  const withNew = keysOf(keys[0]!.accountId, ['a', 'b', 'c', 'd']);
  assert.deepEqual(
    (await countOnce(withNew, now + COUNT_TTL_MS, {})).asked,
    [3, 0, 2, 1],
    'never counted first, then by the last time taken',
  );
});
