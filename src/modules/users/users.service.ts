import { randomBytes, type ScryptOptions, scrypt as scryptCallback } from 'node:crypto';
import { promisify } from 'node:util';
import validator from 'validator';
import type { User } from '../../contract/admin/users.js';
import { USER_ROLES as ROLES, type UserRole as Role } from '../../contract/constants.js';
import { safeEqual } from '../../crypto.js';
import type { Db } from '../../db/connect.js';
import { inTransaction, isUniqueViolation } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { iso } from '../../time.js';
import { getAccount } from '../accounts/accounts.service.js';
import * as repo from './users.repo.js';

export { ROLES, type Role };

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: ScryptOptions) => Promise<Buffer>;
// scrypt is memory-hard (N=2^15, r=8: 32 MiB per hash) and ships with Node: no native add-on.
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), 32, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return safeEqual(actual.toString('base64url'), hash);
}

/** The rules of every password a user gets (invited, changed by themselves, or reset by an administrator). */
export function checkPasswordRules(password: string, path: string): void {
  if (password.length < 8) throw invalid(path, 'password must be at least 8 characters');
}

export async function createUser(
  db: Db,
  accountId: string,
  input: { email: string; password: string; role?: Role },
): Promise<{ id: string }> {
  await getAccount(db, accountId);
  const email = input.email.trim().toLowerCase();
  if (!validator.isEmail(email)) throw invalid('/email', 'email is not a valid address');
  checkPasswordRules(input.password, '/password');
  const role = input.role ?? 'admin';
  if (!ROLES.includes(role)) throw invalid('/role', 'role must be admin or member');
  const id = newId('usr');
  try {
    await repo.insertUser(db, accountId, { id, email, password_hash: await hashPassword(input.password), role, created_at: Date.now() });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('CONFLICT', { message: `a user with email '${email}' already exists` });
    throw err;
  }
  return { id };
}

export async function listUsers(db: Db, accountId: string): Promise<{ items: User[] }> {
  const rows = await repo.listUserRows(db, accountId);
  return { items: rows.map((r) => ({ id: r.id, email: r.email, role: r.role, createdAt: iso(Number(r.created_at)) })) };
}

export const LAST_ADMIN = 'the account must keep at least one administrator';

/**
 * Removes a user of the account and signs them out everywhere. Not oneself: an administrator
 * deleting their own user could leave the account with nobody able to manage it.
 */
export async function deleteUser(db: Db, accountId: string, userId: string, currentUserId: string): Promise<void> {
  if (userId === currentUserId) throw invalid('/id', 'you cannot delete your own user');
  await inTransaction(db, async (tx) => {
    await repo.lockAccount(tx, accountId, db.engine === 'postgres');
    if (!(await repo.deleteUserAndSessions(tx, accountId, userId))) throw new AppError('USER_NOT_FOUND');
    // Two administrators removing each other at once: the second finds no administrator left.
    if ((await repo.countAdmins(tx, accountId)) === 0) throw invalid('/id', LAST_ADMIN);
  });
}

/** The user an email signs in as, with the stored password hash (sign-in only). */
export async function findUserForSignIn(
  db: Db,
  email: string,
): Promise<{ id: string; accountId: string; passwordHash: string } | undefined> {
  const row = await repo.findUserByEmail(db, email);
  return row && { id: row.id, accountId: row.account_id, passwordHash: row.password_hash };
}

/** Whether anyone at all can sign in to the panel yet (first start). */
export async function anyUserExists(db: Db): Promise<boolean> {
  return repo.anyUserExists(db);
}
