import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CommitWindow } from '../../src/dispatcher/commit-window.js';

/** Outcomes arriving within one window continue together (and so share a commit on SQLite). */
test('waits within one window end together, when the window the first opened closes', async () => {
  const window = new CommitWindow(30);
  const opened = Date.now();
  const first = window.wait();
  await new Promise((r) => setTimeout(r, 10));
  const second = window.wait();
  assert.equal(second, first, 'one window, one moment: both continue in the same turn');
  await second;
  const waited = Date.now() - opened;
  assert.ok(waited >= 25 && waited < 200, `closed ${waited} ms after it opened`);

  const next = window.wait();
  assert.notEqual(next, first, 'a wait after the close opens a new window');
  await next;
});

test('a zero window (PostgreSQL) does not hold anything up', async () => {
  const window = new CommitWindow(0);
  let timerRan = false;
  const timer = setTimeout(() => (timerRan = true), 0);
  await window.wait();
  clearTimeout(timer);
  assert.equal(timerRan, false);
});
