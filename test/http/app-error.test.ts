import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '../../src/errors.js';

/**
 * A client's error (4xx) carries no stack trace: it is an answer, not a fault, and capturing
 * one cost every refused request (src/errors.ts). An internal error (5xx) keeps its stack, and
 * the process's own limit is untouched either way.
 */
describe('AppError stack traces', () => {
  const frames = (err: Error) => (err.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).length;

  test('a 4xx has none; its message, status and code are as the table says', () => {
    const err = new AppError('LEAD_NOT_FOUND');
    assert.equal(frames(err), 0, err.stack);
    assert.equal(err.message, 'Lead not found');
    assert.equal(err.status, 404);
    assert.equal(err.code, 'LEAD_NOT_FOUND');
    assert.ok(err instanceof Error && err instanceof AppError);
  });

  test('a 5xx keeps its stack, and Error.stackTraceLimit is restored after either', () => {
    const limit = Error.stackTraceLimit;
    new AppError('VALIDATION');
    assert.equal(Error.stackTraceLimit, limit);
    const err = new AppError('INTERNAL');
    assert.ok(frames(err) > 0, err.stack);
    assert.equal(Error.stackTraceLimit, limit);
    assert.ok(frames(new Error('plain')) > 0, 'other errors keep theirs');
  });
});
