import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import { decrypt, deriveKey, encrypt } from '../../crypto.js';

/**
 * Each campaign signs its webhooks with its own `whsec_` secret (Standard Webhooks format:
 * `whsec_` + base64 of 24 random bytes), stored encrypted with the master secret.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

const cipherKey = (config: Pick<Config, 'secret'>) => deriveKey(config.secret, 'campaign-webhook-secrets');

export const sealWebhookSecret = (config: Pick<Config, 'secret'>, secret: string) => encrypt(cipherKey(config), secret);
export const openWebhookSecret = (config: Pick<Config, 'secret'>, sealed: string) => decrypt(cipherKey(config), sealed);
