import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoUpTo } from '../../src/lru.js';

test('memoUpTo makes a value once, keeps falsy and null values, and forgets all at once when full', () => {
  const cache = new Map<number, number | null | boolean>();
  let made = 0;
  const get = (key: number) =>
    memoUpTo(cache, 3, key, () => {
      made++;
      return key === 0 ? null : key === 1 ? false : key;
    });
  assert.deepEqual([get(0), get(1), get(2)], [null, false, 2]);
  assert.deepEqual([get(0), get(1), get(2)], [null, false, 2]);
  assert.equal(made, 3);
  assert.equal(get(3), 3);
  assert.deepEqual([...cache.keys()], [3]);
  assert.equal(get(0), null);
  assert.equal(made, 5);
});
