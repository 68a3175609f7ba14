import type { Config } from '../../config.js';
import { decrypt, deriveKey } from '../../crypto.js';
import type { Db } from '../../db/connect.js';
import * as repo from './accounts.repo.js';
import { verifyTokenHash } from './whatsapp-verify-token.js';

/** The account's WhatsApp Cloud API settings, decrypted; null when not configured (sends go to the outbox). */
export async function getWhatsAppCredentials(db: Db, config: Pick<Config, 'secret'>, accountId: string) {
  const row = await repo.findWhatsAppSettings(db, accountId);
  if (!row?.whatsapp_phone_number_id || !row.whatsapp_token) return null;
  const key = deriveKey(config.secret, 'account-secrets');
  return {
    phoneNumberId: row.whatsapp_phone_number_id,
    token: decrypt(key, row.whatsapp_token),
    appSecret: row.whatsapp_app_secret ? decrypt(key, row.whatsapp_app_secret) : null,
  };
}

/** The accounts a callback's phone number ids name, among those with an app secret to verify it with. */
export async function accountsByPhoneNumberIds(db: Db, phoneNumberIds: string[]): Promise<{ accountId: string; phoneNumberId: string }[]> {
  return repo.accountIdsByPhoneNumberIds(db, phoneNumberIds);
}

/** Whether the handshake's verify token is some account's (GET /whatsapp/webhook). */
export async function isKnownVerifyToken(db: Db, config: Pick<Config, 'secret'>, token: string): Promise<boolean> {
  return (await repo.accountIdByVerifyTokenHash(db, verifyTokenHash(config, token))) !== undefined;
}
