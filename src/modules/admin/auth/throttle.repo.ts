import { sql } from 'kysely';
import { kyselyOf, type Queryable, writeOn } from '../../../db/queryable.js';

/**
 * SQL of the sign-in throttle: one counter per subject (`email:…` or `ip:…`) and window.
 * Subjects belong to no account (an attempt is counted before anyone is known).
 */

/**
 * Raises the subject's counter while it is under `max` in its window, or starts a new window
 * once the old one is over, in one upsert; the window's start when a place was taken,
 * undefined when the window is full (the row then stays as it is).
 */
export async function takeThrottlePlace(
  db: Queryable,
  subject: string,
  now: number,
  windowMs: number,
  max: number,
): Promise<number | undefined> {
  const windowOver = sql<boolean>`login_throttle.window_start <= ${now - windowMs}`;
  const row = await writeOn(db, (q) =>
    q
      .insertInto('login_throttle')
      .values({ subject, attempts: 1, window_start: now })
      .onConflict((oc) =>
        oc
          .column('subject')
          .doUpdateSet({
            attempts: sql`CASE WHEN ${windowOver} THEN 1 ELSE login_throttle.attempts + 1 END`,
            window_start: sql`CASE WHEN ${windowOver} THEN ${now} ELSE login_throttle.window_start END`,
          })
          .where((eb) => eb.or([windowOver, eb('login_throttle.attempts', '<', max)])),
      )
      .returning('window_start')
      .executeTakeFirst(),
  );
  return row ? Number(row.window_start) : undefined;
}

export async function findWindowStart(db: Queryable, subject: string): Promise<number | undefined> {
  const row = await kyselyOf(db).selectFrom('login_throttle').select('window_start').where('subject', '=', subject).executeTakeFirst();
  return row === undefined ? undefined : Number(row.window_start);
}

/** Gives one place back, only in the window it was taken in. */
export async function releaseThrottlePlace(db: Queryable, subject: string, windowStart: number): Promise<void> {
  await writeOn(db, (q) =>
    q
      .updateTable('login_throttle')
      .set({ attempts: sql`attempts - 1` })
      .where('subject', '=', subject)
      .where('window_start', '=', windowStart)
      .where('attempts', '>', 0)
      .execute(),
  );
}

export async function deleteThrottleSubject(db: Queryable, subject: string): Promise<void> {
  await writeOn(db, (q) => q.deleteFrom('login_throttle').where('subject', '=', subject).execute());
}

/** Windows started at or before `startedBy` (over by now). */
export async function deleteThrottleWindows(db: Queryable, startedBy: number): Promise<void> {
  await writeOn(db, (q) => q.deleteFrom('login_throttle').where('window_start', '<=', startedBy).execute());
}
