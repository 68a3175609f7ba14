import { createHmac } from 'node:crypto';
import type { Config } from '../../config.js';
import { deriveKey } from '../../crypto.js';

/**
 * The look-up form of an account's webhook verify token: HMAC-SHA256 with a key derived from
 * the master secret. Indexed, so the handshake finds the account in one query without
 * decrypting every account's token; keyed, so a copy of the table does not give tokens away
 * to a dictionary attack. The token itself is stored encrypted beside it.
 */
export function verifyTokenHash(config: Pick<Config, 'secret'>, token: string): string {
  return createHmac('sha256', deriveKey(config.secret, 'whatsapp-verify-token')).update(token, 'utf8').digest('hex');
}
