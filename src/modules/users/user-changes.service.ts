import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import * as repo from './users.repo.js';
import { checkPasswordRules, hashPassword, LAST_ADMIN, type Role, verifyPassword } from './users.service.js';

/**
 * What changes a user after their invitation (docs/decisions.md, Users and passwords): the role
 * (administrators), one's own password (with the current one), another user's password
 * (administrators). Passwords are only ever hashed here; they are never logged nor answered.
 */

/**
 * An administrator gives a user of the account another role. The account keeps at least one
 * administrator: demoting the last one (oneself included) is 400 at /role. The account row is
 * locked so concurrent changes are checked one after the other.
 */
export async function changeRole(db: Db, accountId: string, userId: string, role: Role, actorId: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    await repo.lockAccount(tx, accountId, db.engine === 'postgres');
    // The session said administrator; under the lock, a concurrent demotion of the actor shows.
    if ((await repo.findUserRow(tx, accountId, actorId))?.role !== 'admin') throw new AppError('ADMIN_ONLY');
    const user = await repo.findUserRow(tx, accountId, userId);
    if (!user) throw new AppError('USER_NOT_FOUND');
    if (user.role === role) return;
    await repo.setRole(tx, accountId, userId, role);
    if ((await repo.countAdmins(tx, accountId)) === 0) throw invalid('/role', LAST_ADMIN);
  });
}

/**
 * A user changes their own password: the current one must match (400 at /currentPassword),
 * the new one follows the rules of an invitation. Every other session of theirs ends; the one
 * making the change stays signed in.
 */
export async function changeOwnPassword(
  db: Db,
  who: { accountId: string; userId: string; sessionId: string },
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  checkPasswordRules(input.newPassword, '/newPassword');
  const user = await repo.findUserRow(db, who.accountId, who.userId);
  if (!user) throw new AppError('USER_NOT_FOUND');
  if (!(await verifyPassword(input.currentPassword, user.password_hash))) {
    throw invalid('/currentPassword', 'the current password is not correct');
  }
  const hash = await hashPassword(input.newPassword);
  await inTransaction(db, async (tx) => {
    await repo.setPasswordHash(tx, who.accountId, who.userId, hash);
    await repo.deleteSessionsOf(tx, who.accountId, who.userId, who.sessionId);
  });
}

/**
 * An administrator sets a new password for another user of the account (forgotten password)
 * and tells it to them; that user is signed out everywhere. Not for oneself: changing one's own
 * password asks for the current one (changeOwnPassword).
 */
export async function resetPassword(db: Db, accountId: string, userId: string, password: string, currentUserId: string): Promise<void> {
  if (userId === currentUserId) throw invalid('/id', 'change your own password from your profile');
  checkPasswordRules(password, '/password');
  const hash = await hashPassword(password);
  await inTransaction(db, async (tx) => {
    if (!(await repo.findUserRow(tx, accountId, userId))) throw new AppError('USER_NOT_FOUND');
    await repo.setPasswordHash(tx, accountId, userId, hash);
    await repo.deleteSessionsOf(tx, accountId, userId);
  });
}
