import type { Db } from '../../../db/connect.js';
import { newId } from '../../../ids.js';

/** docs/admin-api.md: 5 failed sign-ins for one email or one IP within 15 minutes, then 429. */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
export const THROTTLE_MAX_FAILURES = 5;

/**
 * Seconds until a sign-in for this email from this IP may be tried again; 0 when it may now.
 * Failures live in the database, so every API process counts the same ones. The wait ends
 * when the oldest of the last 5 failures leaves the window.
 */
export async function throttleWait(db: Db, email: string, ip: string, now: number): Promise<number> {
  const since = now - THROTTLE_WINDOW_MS;
  const recent = (column: 'email' | 'ip', value: string) =>
    db.kysely
      .selectFrom('login_attempts')
      .select('created_at')
      .where(column, '=', value)
      .where('created_at', '>', since)
      .orderBy('created_at', 'desc')
      .limit(THROTTLE_MAX_FAILURES)
      .execute();
  const [byEmail, byIp] = await Promise.all([recent('email', email), recent('ip', ip)]);
  const waitFor = (rows: { created_at: number }[]) =>
    rows.length < THROTTLE_MAX_FAILURES ? 0 : Math.max(1, Math.ceil((Number(rows[rows.length - 1]!.created_at) + THROTTLE_WINDOW_MS - now) / 1000));
  return Math.max(waitFor(byEmail), waitFor(byIp));
}

/** Records one failure; failures older than the window are dropped on the way (they never count again). */
export async function recordFailure(db: Db, email: string, ip: string, now: number): Promise<void> {
  await db.kysely.deleteFrom('login_attempts').where('created_at', '<=', now - THROTTLE_WINDOW_MS).execute();
  await db.kysely.insertInto('login_attempts').values({ id: newId('lat'), email, ip, created_at: now }).execute();
}

/**
 * A successful sign-in forgets the email's failures (the owner's typos should not lock them
 * out later), but not the IP's: a guesser holding one valid account must not reset its count.
 */
export async function clearFailures(db: Db, email: string): Promise<void> {
  await db.kysely.deleteFrom('login_attempts').where('email', '=', email).execute();
}
