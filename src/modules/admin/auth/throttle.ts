import type { Db } from '../../../db/connect.js';
import { AppError } from '../../../errors.js';
import { throttleAddress } from '../../../http/client-address.js';
import * as repo from './throttle.repo.js';

/**
 * docs/admin-api.md: 5 sign-in attempts for one email or one client address within 15
 * minutes, then 429 until the window ends (decisions.md, Hardening, has the details).
 */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
export const THROTTLE_MAX_ATTEMPTS = 5;

/** One counted attempt: which windows it took a place in, to give the places back on success. */
export interface Attempt {
  email: Place;
  ip: Place;
}
interface Place {
  subject: string;
  windowStart: number;
}

/**
 * Counts a sign-in attempt for the email and for the client address BEFORE the password is
 * checked, or throws 429 with Retry-After. Each count is one upsert that only raises the
 * counter while it is under the limit (or starts a new window once the old one is over), so
 * of any number of concurrent attempts, in one process or many, at most 5 per window get a
 * place and reach the password check. A refused attempt takes no place.
 */
export async function countAttempt(db: Db, email: string, ip: string, now: number): Promise<Attempt> {
  const emailPlace = await takePlace(db, `email:${email}`, now);
  if (typeof emailPlace === 'number') throw throttled(emailPlace);
  const ipPlace = await takePlace(db, `ip:${throttleAddress(ip)}`, now);
  if (typeof ipPlace === 'number') {
    await givePlaceBack(db, emailPlace);
    throw throttled(ipPlace);
  }
  return { email: emailPlace, ip: ipPlace };
}

/**
 * A successful sign-in forgets the email's attempts (the owner's typos should not lock them
 * out later) and gives back its own place at the address, but not the address's failures:
 * a guesser holding one valid account must not reset its count by signing in.
 */
export async function attemptSucceeded(db: Db, attempt: Attempt): Promise<void> {
  await repo.deleteThrottleSubject(db, attempt.email.subject);
  await givePlaceBack(db, attempt.ip);
}

/** A failed attempt keeps its places; windows over by now are dropped on the way. */
export async function attemptFailed(db: Db, now: number): Promise<void> {
  await repo.deleteThrottleWindows(db, now - THROTTLE_WINDOW_MS);
}

/** A place in the subject's current window, or the seconds until the window ends. */
async function takePlace(db: Db, subject: string, now: number): Promise<Place | number> {
  const windowStart = await repo.takeThrottlePlace(db, subject, now, THROTTLE_WINDOW_MS, THROTTLE_MAX_ATTEMPTS);
  if (windowStart !== undefined) return { subject, windowStart };
  // Full: the row stays as it is until its window ends.
  const endsAt = ((await repo.findWindowStart(db, subject)) ?? now) + THROTTLE_WINDOW_MS;
  return Math.max(1, Math.ceil((endsAt - now) / 1000));
}

/** Only in the window the place was taken in: a window started since owes nothing. */
async function givePlaceBack(db: Db, place: Place): Promise<void> {
  await repo.releaseThrottlePlace(db, place.subject, place.windowStart);
}

function throttled(waitSeconds: number): AppError {
  return new AppError('LOGIN_THROTTLED', { headers: { 'retry-after': String(waitSeconds) } });
}
