import type { Config } from '../../config.js';
import { signToken, verifyToken } from '../../signing.js';

/**
 * Signed tokens of the open pixel and the click redirect (decisions.md, Sends).
 *
 * A token's payload names the send (and, for a click, the target address) and an expiry; the
 * HMAC (signing.ts, one derived key per purpose) proves Herald wrote it. So the redirect can
 * only ever lead to an address that was in a rendered email, an open token never passes for a
 * click (nor an unsubscribe), and nothing can be counted for a send without the secret.
 */
const OPEN = 'open';
const CLICK = 'click';

/**
 * How long a tracking link works. Opens and clicks of mail that old say nothing about a
 * campaign any more, and an expiry bounds how long a leaked link can be replayed. Unsubscribe
 * links have none: they must keep working for as long as the email exists.
 */
export const TRACKING_LINK_LIFETIME_DAYS = 365;
const LIFETIME_MS = TRACKING_LINK_LIFETIME_DAYS * 86_400_000;

/**
 * The longest address a click link is made for. The token carries the address (base64, a
 * third longer), and the router refuses longer path parameters (MAX_TOKEN_LENGTH): a longer
 * link is left as it was, untracked but working.
 */
export const MAX_TRACKED_URL_LENGTH = 2048;
/** Fastify's `maxParamLength` must allow this (app.ts). */
export const MAX_TOKEN_LENGTH = 4096;

type Signing = Pick<Config, 'publicUrl' | 'secret'>;

export function openPixelUrl(config: Signing, sendId: string, now = Date.now()): string {
  return `${config.publicUrl}/t/o/${signToken(config.secret, OPEN, JSON.stringify([sendId, expiry(now)]))}`;
}

/** `target` is an absolute http(s) address, already in the form the redirect will answer. */
export function clickUrl(config: Signing, sendId: string, target: string, now = Date.now()): string {
  return `${config.publicUrl}/t/c/${signToken(config.secret, CLICK, JSON.stringify([sendId, expiry(now), target]))}`;
}

/** The send a genuine, unexpired open token names; undefined otherwise. */
export function readOpenToken(config: Pick<Config, 'secret'>, token: string, now = Date.now()): { sendId: string } | undefined {
  const payload = read(config, OPEN, token, now);
  return payload && payload.length === 2 ? { sendId: payload[0] as string } : undefined;
}

/** The send and target a genuine, unexpired click token names; undefined otherwise. */
export function readClickToken(
  config: Pick<Config, 'secret'>,
  token: string,
  now = Date.now(),
): { sendId: string; url: string } | undefined {
  const payload = read(config, CLICK, token, now);
  if (payload?.length !== 3) return undefined;
  const url = payload[2];
  // Only ever written for http(s) addresses; checked again so a redirect can never go elsewhere.
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return undefined;
  return { sendId: payload[0] as string, url };
}

/**
 * The target of a click token of ours, expired or not (read as at the dawn of time, so the
 * expiry plays no part): the admin panel shows it in place of the click address.
 */
export function clickTokenTarget(config: Pick<Config, 'secret'>, token: string): string | undefined {
  return readClickToken(config, token, -Infinity)?.url;
}

/** Expiry in epoch seconds: shorter tokens than milliseconds, and precise enough. */
function expiry(now: number): number {
  return Math.floor((now + LIFETIME_MS) / 1000);
}

function read(config: Pick<Config, 'secret'>, purpose: string, token: string, now: number): unknown[] | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const text = verifyToken(config.secret, purpose, token);
  if (text === undefined) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return undefined;
  }
  // The MAC already proves we wrote it; the shape checks only guard against our own old formats.
  if (!Array.isArray(payload) || typeof payload[0] !== 'string' || typeof payload[1] !== 'number') return undefined;
  if (payload[1] * 1000 <= now) return undefined;
  return payload;
}
