import { kyselyOf, type Queryable, writeOn } from '../../../db/queryable.js';
import type { SessionsTable } from '../../../db/schema.js';

/**
 * SQL of the panel's sessions. A session is found by the hash of its cookie token: finding
 * the user and account is the purpose of the look-up, so it starts from no account id.
 */

/** Expired sessions of anyone. */
export async function deleteExpiredSessions(db: Queryable, now: number): Promise<void> {
  await writeOn(db, (q) => q.deleteFrom('sessions').where('expires_at', '<=', now).execute());
}

export async function insertSession(db: Queryable, accountId: string, row: Omit<SessionsTable, 'account_id'>): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('sessions')
      .values({ ...row, account_id: accountId })
      .execute(),
  );
}

/** The session with its user and account as they are now. */
export async function findSessionWithUser(db: Queryable, sessionId: string) {
  return kyselyOf(db)
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .select([
      's.id',
      's.user_id',
      's.account_id',
      's.csrf_token',
      's.expires_at',
      'u.email',
      'u.role',
      'u.account_id as user_account',
      'a.name',
      'a.plan',
    ])
    .where('s.id', '=', sessionId)
    .executeTakeFirst();
}

export async function setSessionExpiry(db: Queryable, sessionId: string, expiresAt: number): Promise<void> {
  await writeOn(db, (q) => q.updateTable('sessions').set({ expires_at: expiresAt }).where('id', '=', sessionId).execute());
}

export async function deleteSession(db: Queryable, sessionId: string): Promise<void> {
  await writeOn(db, (q) => q.deleteFrom('sessions').where('id', '=', sessionId).execute());
}
