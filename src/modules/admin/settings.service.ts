import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { isoOrNull, iso } from '../../time.js';
import { getAccount } from '../accounts/accounts.service.js';
import type { ApiKey } from '../keys/keys.service.js';
import { countSendsSince } from '../sends/sends.repo.js';

/** The account page: plan, allowance and this month's use, WhatsApp settings (never the token). */
export async function accountView(db: Db, accountId: string, now = Date.now()) {
  const account = await getAccount(db, accountId);
  const date = new Date(now);
  // The same count, over the same UTC calendar month, as the allowance check of a trigger.
  const usedThisMonth = await countSendsSince(db.kysely, accountId, Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
  return {
    id: account.id,
    name: account.name,
    plan: account.plan,
    allowance: account.allowance,
    usedThisMonth,
    whatsapp: { configured: account.whatsapp_phone_number_id !== null && account.whatsapp_token !== null, phoneNumberId: account.whatsapp_phone_number_id },
  };
}

/** A key as the panel lists it; `state` is computed now, in the order the API checks (inactive, then expired). */
export function presentKey(key: ApiKey, now = Date.now()) {
  const state = !key.active ? 'inactive' : key.expiresAt !== null && key.expiresAt <= now ? 'expired' : 'active';
  return { id: key.id, name: key.name, scopes: key.scopes, active: key.active, expiresAt: isoOrNull(key.expiresAt), state, createdAt: iso(key.createdAt) } as const;
}

export async function listUsers(db: Db, accountId: string) {
  const rows = await db.kysely
    .selectFrom('users')
    .select(['id', 'email', 'role', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return { items: rows.map((r) => ({ id: r.id, email: r.email, role: r.role, createdAt: iso(Number(r.created_at)) })) };
}

/**
 * Removes a user of the account and signs them out everywhere. Not oneself: an administrator
 * deleting their own user could leave the account with nobody able to manage it.
 */
export async function deleteUser(db: Db, accountId: string, userId: string, currentUserId: string): Promise<void> {
  if (userId === currentUserId) throw invalid('/id', 'you cannot delete your own user');
  const deleted = await inTransaction(db, async (tx) => {
    const user = await tx.selectFrom('users').select('id').where('account_id', '=', accountId).where('id', '=', userId).executeTakeFirst();
    if (!user) return false;
    await tx.deleteFrom('sessions').where('user_id', '=', userId).execute();
    await tx.deleteFrom('users').where('account_id', '=', accountId).where('id', '=', userId).execute();
    return true;
  });
  if (!deleted) throw new AppError('USER_NOT_FOUND');
}
