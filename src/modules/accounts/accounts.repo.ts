import type { Insertable } from 'kysely';
import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { AccountsTable } from '../../db/schema.js';

/**
 * SQL of the accounts. Two WhatsApp look-ups cannot start from an account id, because finding
 * the account is their purpose: by the phone number id a callback names (its signature is then
 * checked with that account's app secret), and by the handshake's verify token.
 */

export async function insertAccount(db: Queryable, row: Insertable<AccountsTable>): Promise<void> {
  await writeOn(db, (q) => q.insertInto('accounts').values(row).execute());
}

export async function updateAccountRow(db: Queryable, accountId: string, values: Partial<AccountsTable>): Promise<void> {
  await writeOn(db, (q) => q.updateTable('accounts').set(values).where('id', '=', accountId).execute());
}

export async function findAccountRow(db: Queryable, accountId: string): Promise<AccountsTable | undefined> {
  return kyselyOf(db).selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
}

/** The stored (encrypted) WhatsApp Cloud API settings. */
export async function findWhatsAppSettings(
  db: Queryable,
  accountId: string,
): Promise<Pick<AccountsTable, 'whatsapp_phone_number_id' | 'whatsapp_token' | 'whatsapp_app_secret'> | undefined> {
  return kyselyOf(db)
    .selectFrom('accounts')
    .select(['whatsapp_phone_number_id', 'whatsapp_token', 'whatsapp_app_secret'])
    .where('id', '=', accountId)
    .executeTakeFirst();
}

/** The accounts with these phone number ids and an app secret (no secret: no callback can be verified). */
export async function accountIdsByPhoneNumberIds(
  db: Queryable,
  phoneNumberIds: string[],
): Promise<{ accountId: string; phoneNumberId: string }[]> {
  if (phoneNumberIds.length === 0) return [];
  const rows = await kyselyOf(db)
    .selectFrom('accounts')
    .select(['id', 'whatsapp_phone_number_id'])
    .where('whatsapp_phone_number_id', 'in', phoneNumberIds)
    .where('whatsapp_app_secret', 'is not', null)
    .execute();
  return rows.map((r) => ({ accountId: r.id, phoneNumberId: r.whatsapp_phone_number_id! }));
}

export async function accountIdByVerifyTokenHash(db: Queryable, hash: string): Promise<string | undefined> {
  const row = await kyselyOf(db).selectFrom('accounts').select('id').where('whatsapp_verify_token_hash', '=', hash).executeTakeFirst();
  return row?.id;
}
