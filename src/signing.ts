import { createHmac } from 'node:crypto';
import { deriveKey, safeEqual } from './crypto.js';
import { memoUpTo } from './lru.js';

/**
 * Signed tokens for links put into messages (unsubscribe now; open and click tracking later).
 *
 * A token is `base64url(payload) "." base64url(HMAC-SHA256(key, payload))`, where the key is
 * derived from the master secret and the token's purpose, so a token made for one purpose
 * (say, a click) never verifies as another (an unsubscribe). The payload is readable, not
 * secret: it names things (a send id), and the MAC only proves we issued it. The secret itself
 * never appears in a URL.
 */
export function signToken(secret: string, purpose: string, payload: string): string {
  const body = Buffer.from(payload, 'utf8').toString('base64url');
  return `${body}.${mac(secret, purpose, body)}`;
}

/** The payload of a token we issued for this purpose; undefined for anything altered or foreign. */
export function verifyToken(secret: string, purpose: string, token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined;
  const body = token.slice(0, dot);
  const signature = token.slice(dot + 1);
  // The MAC covers the base64url text as written, and is compared as text. Base64 decoding is
  // lenient (stray characters, unused low bits of the last character): comparing decoded bytes
  // would let some altered tokens through.
  if (!safeEqual(signature, mac(secret, purpose, body))) return undefined;
  return Buffer.from(body, 'base64url').toString('utf8');
}

function mac(secret: string, purpose: string, body: string): string {
  return createHmac('sha256', keyOf(secret, purpose)).update(body).digest('base64url');
}

/**
 * The purpose's key, derived once per secret and purpose instead of once per token: a message
 * signs several (unsubscribe, open pixel, each tracked link), and the derivation is an HMAC of its
 * own. A handful of purposes, one secret per process (tests use a few): the map stays tiny, and a
 * caller that passes ever new secrets empties it rather than grow it (a derivation is 3 µs).
 */
const keys = new Map<string, Buffer>();
const MAX_KEYS = 64;

function keyOf(secret: string, purpose: string): Buffer {
  return memoUpTo(keys, MAX_KEYS, `${purpose}\u0000${secret}`, () => deriveKey(secret, `signed-token:${purpose}`));
}
