import { randomBytes } from 'node:crypto';
import type { Session } from '../../../contract/admin/session.js';
import type { Plan, UserRole as Role } from '../../../contract/constants.js';
import { sha256Hex } from '../../../crypto.js';
import type { Db } from '../../../db/connect.js';
import * as repo from './sessions.repo.js';

export const SESSION_COOKIE = 'herald_session';
/** docs/admin-api.md: sessions live 7 days, sliding. */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * A session slides at most once a minute: the panel fires several requests per page, and
 * each need not write the row again for an expiry that moved by milliseconds.
 */
const SLIDE_EVERY_MS = 60 * 1000;

/** Who is signed in, as every admin route sees it. */
export interface AdminSession {
  /** SHA-256 of the cookie token: the row's id. */
  id: string;
  userId: string;
  email: string;
  role: Role;
  accountId: string;
  accountName: string;
  plan: Plan;
  csrfToken: string;
  expiresAt: number;
}

/** The body of login and `GET /session` (docs/admin-api.md). */
export function presentSession(session: AdminSession): Session {
  return {
    user: { id: session.userId, email: session.email, role: session.role },
    account: { id: session.accountId, name: session.accountName, plan: session.plan },
    csrfToken: session.csrfToken,
  };
}

/**
 * Opens a session for the user. The cookie carries 32 random bytes; the database keeps only
 * their SHA-256, so reading the sessions table signs nobody in.
 */
export async function openSession(
  db: Db,
  user: { id: string; accountId: string },
  now: number,
): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now + SESSION_TTL_MS;
  // Expired sessions of anyone go at sign-in: the table never grows with abandoned ones.
  await repo.deleteExpiredSessions(db, now);
  await repo.insertSession(db, user.accountId, {
    id: sha256Hex(token),
    user_id: user.id,
    csrf_token: randomBytes(32).toString('base64url'),
    expires_at: expiresAt,
    created_at: now,
  });
  return { token, expiresAt };
}

/**
 * The live session a cookie token names, with its user and account read fresh (a role change
 * or a deleted user takes effect on the next request), or undefined. Slides the expiry; `slid`
 * tells the caller to send the cookie again with the new lifetime.
 */
export async function readSession(db: Db, token: string, now: number): Promise<{ session: AdminSession; slid: boolean } | undefined> {
  const row = await repo.findSessionWithUser(db, sha256Hex(token));
  if (!row || row.user_account !== row.account_id) return undefined;
  if (Number(row.expires_at) <= now) {
    await closeSession(db, row.id);
    return undefined;
  }
  let expiresAt = Number(row.expires_at);
  const slid = now + SESSION_TTL_MS - expiresAt >= SLIDE_EVERY_MS;
  if (slid) {
    expiresAt = now + SESSION_TTL_MS;
    await repo.setSessionExpiry(db, row.id, expiresAt);
  }
  const session: AdminSession = {
    id: row.id,
    userId: row.user_id,
    email: row.email,
    role: row.role,
    accountId: row.account_id,
    accountName: row.name,
    plan: row.plan,
    csrfToken: row.csrf_token,
    expiresAt,
  };
  return { session, slid };
}

export async function closeSession(db: Db, sessionId: string): Promise<void> {
  await repo.deleteSession(db, sessionId);
}
