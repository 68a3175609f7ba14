import type { Config } from '../../config.js';
import { signToken, verifyToken } from '../../signing.js';

/** The signing purpose of unsubscribe links: a tracking token can never pass for one. */
const PURPOSE = 'unsubscribe';

/**
 * The unsubscribe link of one send. The token names the send, and the send row names the
 * account, the contact and the campaign; the link therefore carries no address and no secret.
 */
export function unsubscribeUrl(config: Pick<Config, 'publicUrl' | 'secret'>, sendId: string): string {
  return `${config.publicUrl}/unsubscribe/${signToken(config.secret, PURPOSE, sendId)}`;
}

/** The send id a genuine unsubscribe token names; undefined for an altered or foreign one. */
export function readUnsubscribeToken(config: Pick<Config, 'secret'>, token: string): string | undefined {
  return verifyToken(config.secret, PURPOSE, token);
}
