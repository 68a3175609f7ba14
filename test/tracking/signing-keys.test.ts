import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signToken, verifyToken } from '../../src/signing.js';

/**
 * signing.ts keeps the keys it derived per secret and purpose; a process that meets many
 * secrets (tests, a future rotation) empties that store rather than grow it. Whatever the
 * store holds, a token verifies with its own secret and purpose only.
 */
test('tokens of many secrets each verify with their own secret and purpose, and with no other', () => {
  const secrets = Array.from({ length: 200 }, (_, i) => `secret-${i}-${'x'.repeat(32)}`);
  const tokens = secrets.map((secret, i) => signToken(secret, 'click', `send-${i}`));
  for (const [i, secret] of secrets.entries()) {
    assert.equal(verifyToken(secret, 'click', tokens[i]!), `send-${i}`);
    assert.equal(verifyToken(secret, 'open', tokens[i]!), undefined);
    assert.equal(verifyToken(secrets[(i + 1) % secrets.length]!, 'click', tokens[i]!), undefined);
  }
});
