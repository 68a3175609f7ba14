import type { Config } from '../../config.js';
import { decrypt, deriveKey } from '../../crypto.js';
import type { Db } from '../../db/connect.js';

/** The account's WhatsApp Cloud API settings, decrypted; null when not configured (sends go to the outbox). */
export async function getWhatsAppCredentials(db: Db, config: Pick<Config, 'secret'>, accountId: string) {
  const row = await db.kysely
    .selectFrom('accounts')
    .select(['whatsapp_phone_number_id', 'whatsapp_token', 'whatsapp_app_secret'])
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (!row?.whatsapp_phone_number_id || !row.whatsapp_token) return null;
  const key = deriveKey(config.secret, 'account-secrets');
  return {
    phoneNumberId: row.whatsapp_phone_number_id,
    token: decrypt(key, row.whatsapp_token),
    appSecret: row.whatsapp_app_secret ? decrypt(key, row.whatsapp_app_secret) : null,
  };
}
