import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { inTransaction, type Tx } from '../../db/transaction.js';
import { accountsByPhoneNumberIds, getWhatsAppCredentials } from '../accounts/whatsapp-credentials.js';
import { findContactIdByPhone, optOutContact } from '../contacts/contacts.service.js';
import { normalizePhone } from '../contacts/normalize.js';
import { recordReadOnce } from '../tracking/tracking.service.js';
import * as repo from './whatsapp.repo.js';
import type { InboundMessage, PhoneNumberChange, StatusUpdate } from './whatsapp-payload.js';

export { isKnownVerifyToken } from '../accounts/whatsapp-credentials.js';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** X-Hub-Signature-256: `sha256=` + hex HMAC-SHA256 of the raw body with the app secret; compared in constant time. */
export function signatureMatches(rawBody: Buffer, header: string, appSecret: string): boolean {
  const given = SIGNATURE.exec(header.trim());
  if (!given) return false;
  return timingSafeEqual(createHmac('sha256', appSecret).update(rawBody).digest(), Buffer.from(given[1]!, 'hex'));
}

export function isWellFormedSignature(header: string | undefined): header is string {
  return header !== undefined && SIGNATURE.test(header.trim());
}

/**
 * The changes whose account's own app secret verifies the signature, grouped by account. Each
 * change is checked against the account its phone number id names: a payload signed with one
 * account's app secret can never touch another account's sends or contacts, even when it
 * names that account's phone number.
 */
export async function verifiedChanges(
  db: Db,
  config: Pick<Config, 'secret'>,
  rawBody: Buffer,
  signature: string,
  changes: PhoneNumberChange[],
): Promise<Map<string, PhoneNumberChange[]>> {
  const phoneNumberIds = [...new Set(changes.map((c) => c.phoneNumberId))];
  const verified = new Map<string, PhoneNumberChange[]>();
  for (const { accountId, phoneNumberId } of await accountsByPhoneNumberIds(db, phoneNumberIds)) {
    const appSecret = (await getWhatsAppCredentials(db, config, accountId))?.appSecret;
    if (!appSecret || !signatureMatches(rawBody, signature, appSecret)) continue;
    const own = changes.filter((c) => c.phoneNumberId === phoneNumberId);
    verified.set(accountId, [...(verified.get(accountId) ?? []), ...own]);
  }
  return verified;
}

export interface AppliedCallback {
  statuses: number;
  /** Contacts opted out by this callback (not those who already were). */
  optedOut: string[];
}

/**
 * Applies one account's verified changes in one transaction. Meta retries a callback until it
 * gets a 200 and may deliver one twice, so every step is idempotent: delivered is set once,
 * a read counts one open per send, failed moves only a `sent` send to error, opting out is
 * conditional. A status for a message Herald did not send (another tool on the same number)
 * is ignored.
 */
export async function applyChanges(db: Db, accountId: string, changes: PhoneNumberChange[], now = Date.now()): Promise<AppliedCallback> {
  const lock = db.engine === 'postgres';
  return inTransaction(db, async (tx) => {
    const applied: AppliedCallback = { statuses: 0, optedOut: [] };
    for (const change of changes) {
      for (const status of change.statuses) if (await applyStatus(tx, accountId, status, now, lock)) applied.statuses++;
      for (const message of change.messages) {
        const contactId = await applyMessage(tx, accountId, message, now);
        if (contactId !== undefined) applied.optedOut.push(contactId);
      }
    }
    return applied;
  });
}

/** Reason of a failed send when the API gives no error title. */
export const FAILED_WITHOUT_TITLE = 'WhatsApp reported the message as failed';

async function applyStatus(tx: Tx, accountId: string, update: StatusUpdate, now: number, lock: boolean): Promise<boolean> {
  // Locked on PostgreSQL: two deliveries of the same read must not both find "no open yet".
  const send = await repo.findSendByWamid(tx, accountId, update.wamid, lock);
  if (!send) return false;
  // Meta's time of the event, unless it lies in our future (clock skew): statistics go by day.
  const at = Math.min(update.at ?? now, now);
  switch (update.status) {
    case 'delivered':
      await repo.markDelivered(tx, accountId, send.id, at);
      return true;
    case 'read':
      // A read message was delivered, whether or not that receipt came (or comes first).
      await repo.markDelivered(tx, accountId, send.id, at);
      // Test sends stay out of the statistics (admin panel, migration 0004).
      await recordReadOnce(tx, send, at);
      return true;
    case 'failed':
      await repo.markFailed(tx, accountId, send.id, (update.errorTitle ?? FAILED_WITHOUT_TITLE).slice(0, 1000), now);
      return true;
    default:
      // `sent` (we mark sends sent when the API accepts them) and anything newer: nothing to do.
      return false;
  }
}

/** The opted-out contact's id when the message is a STOP from one of the account's contacts. */
async function applyMessage(tx: Tx, accountId: string, message: InboundMessage, now: number): Promise<string | undefined> {
  if (!isStopRequest(message.text)) return undefined;
  const phone = normalizePhone(message.from);
  if (phone === undefined) return undefined;
  const contactId = await findContactIdByPhone(tx, accountId, phone);
  if (contactId === undefined) return undefined;
  return (await optOutContact(tx, accountId, contactId, now)) ? contactId : undefined;
}

/**
 * Texts that mean "stop": STOP in any case and spacing, with trailing punctuation, and the
 * "Stop promotions" quick-reply button Meta adds to marketing templates. Only the whole
 * message counts: "don't stop" or "stop by tomorrow" opt nobody out.
 */
const STOP_TEXTS = new Set(['stop', 'stop promotions']);

export function isStopRequest(text: string | undefined): boolean {
  if (text === undefined) return false;
  const normalized = text
    .normalize('NFKC')
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[.!\s]+$/, '')
    .toLowerCase();
  return STOP_TEXTS.has(normalized);
}
