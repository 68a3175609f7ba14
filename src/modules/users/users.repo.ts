import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { UsersTable } from '../../db/schema.js';

/** SQL of the admin panel's users. */

export async function insertUser(db: Queryable, accountId: string, row: Omit<UsersTable, 'account_id'>): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('users')
      .values({ ...row, account_id: accountId })
      .execute(),
  );
}

/** Oldest first; never the password hash. */
export async function listUserRows(db: Queryable, accountId: string): Promise<Pick<UsersTable, 'id' | 'email' | 'role' | 'created_at'>[]> {
  return kyselyOf(db)
    .selectFrom('users')
    .select(['id', 'email', 'role', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Removes the account's user and their sessions (signed out everywhere); false when the account has no such user. */
export async function deleteUserAndSessions(db: Queryable, accountId: string, userId: string): Promise<boolean> {
  return writeOn(db, async (q) => {
    const user = await q.selectFrom('users').select('id').where('account_id', '=', accountId).where('id', '=', userId).executeTakeFirst();
    if (!user) return false;
    await q.deleteFrom('sessions').where('user_id', '=', userId).execute();
    await q.deleteFrom('users').where('account_id', '=', accountId).where('id', '=', userId).execute();
    return true;
  });
}

/**
 * Emails are unique across accounts, so sign-in finds the user (and so the account) by email
 * alone: the one look-up without an account id.
 */
export async function findUserByEmail(
  db: Queryable,
  email: string,
): Promise<Pick<UsersTable, 'id' | 'account_id' | 'password_hash'> | undefined> {
  return kyselyOf(db).selectFrom('users').select(['id', 'account_id', 'password_hash']).where('email', '=', email).executeTakeFirst();
}

/** Whether the database has any user at all, in any account (first start). */
export async function anyUserExists(db: Queryable): Promise<boolean> {
  return (await kyselyOf(db).selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Holds the account row until commit (PostgreSQL; SQLite transactions already hold the write
 * lock from their start): role changes and removals of one account run one at a time, so two
 * administrators demoting each other cannot both succeed and leave nobody in charge.
 */
export async function lockAccount(db: Queryable, accountId: string, lock: boolean): Promise<void> {
  let query = kyselyOf(db).selectFrom('accounts').select('id').where('id', '=', accountId);
  if (lock) query = query.forUpdate();
  await query.executeTakeFirst();
}

export async function findUserRow(
  db: Queryable,
  accountId: string,
  userId: string,
): Promise<Pick<UsersTable, 'id' | 'role' | 'password_hash'> | undefined> {
  return kyselyOf(db)
    .selectFrom('users')
    .select(['id', 'role', 'password_hash'])
    .where('account_id', '=', accountId)
    .where('id', '=', userId)
    .executeTakeFirst();
}

export async function countAdmins(db: Queryable, accountId: string): Promise<number> {
  const row = await kyselyOf(db)
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'admin')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setRole(db: Queryable, accountId: string, userId: string, role: UsersTable['role']): Promise<void> {
  await writeOn(db, (q) => q.updateTable('users').set({ role }).where('account_id', '=', accountId).where('id', '=', userId).execute());
}

export async function setPasswordHash(db: Queryable, accountId: string, userId: string, hash: string): Promise<void> {
  await writeOn(db, (q) =>
    q.updateTable('users').set({ password_hash: hash }).where('account_id', '=', accountId).where('id', '=', userId).execute(),
  );
}

/** Signs the user out everywhere, except the session `keep` (the one changing its own password). */
export async function deleteSessionsOf(db: Queryable, accountId: string, userId: string, keep?: string): Promise<void> {
  await writeOn(db, (q) => {
    const query = q.deleteFrom('sessions').where('account_id', '=', accountId).where('user_id', '=', userId);
    return (keep === undefined ? query : query.where('id', '!=', keep)).execute();
  });
}
