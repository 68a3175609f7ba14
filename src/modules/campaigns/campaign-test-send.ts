import type { Db } from '../../db/connect.js';
import { AppError, invalid } from '../../errors.js';
import { RateLimiter } from '../../http/rate-limit.js';
import { checkTriggerDataSize } from '../../json-limits.js';
import { normalizeEmail, normalizePhone } from '../contacts/normalize.js';
import { queueTestSend } from '../sends/test-send.service.js';
import { missingForActivation } from './campaign-settings.js';
import { getCampaign } from './campaigns.service.js';

/**
 * Tests to an address of one's choice, per account: 10 at once, then one every 6 seconds. A
 * panel user tries a draft a few times a minute; more is a mailing, not a test (decisions.md,
 * Authoring). In this process's memory, like the API's rate limit.
 */
const testsToAnyAddress = new RateLimiter(10 / 60, 10);

export interface TestSendInput {
  contactId: string;
  /** An address other than the contact's (email or phone, as the channel needs): the test goes there. */
  to?: string;
  data?: Record<string, unknown>;
}

/**
 * `POST /campaigns/:id/test-send`: a real send of the campaign to one contact, queued due now
 * and delivered by the dispatcher through the campaign's channel, marked `test`. It skips the
 * trigger rules (activation, re-entry, allowance) so a draft can be tried, and it is left out
 * of statistics and of the allowance. An opted-out contact still gets nothing: the spec allows
 * no message to them, whoever asks. `data` stands for a trigger's data (`{{ trigger.* }}`), with
 * the same limits; without it, trigger.* renders empty. `to` sends the message rendered with the
 * contact's data to that address instead (administrators only, checked by the route; rate-limited
 * per account here); its unsubscribe link opts no one out (unsubscribe.service.ts).
 */
export async function testSend(
  deps: { db: Db; wakeup?: (dueAt: number) => void },
  accountId: string,
  campaignId: string,
  input: TestSendInput,
): Promise<{ sendId: string }> {
  const { db } = deps;
  if (input.data !== undefined) checkTriggerDataSize(input.data, '/data');
  const campaign = await getCampaign(db, accountId, campaignId);
  const missing = missingForActivation(campaign);
  if (missing.length > 0)
    throw invalid('/campaign', `the ${campaign.channel} campaign has no ${missing.join(', ')}: complete it before a test send`);
  const to = input.to === undefined ? undefined : testAddress(campaign.channel, input.to);

  const now = Date.now();
  if (to !== undefined) {
    const wait = testsToAnyAddress.take(accountId, now);
    if (wait > 0) throw new AppError('RATE_LIMITED', { headers: { 'retry-after': String(wait) } });
  }
  let sendId: string;
  try {
    sendId = await queueTestSend(db, campaign, input.contactId, now, input.data, to);
  } catch (err) {
    // Nothing was queued (unknown or opted-out contact): it does not count against the limit.
    if (to !== undefined) testsToAnyAddress.refund(accountId);
    throw err;
  }
  deps.wakeup?.(now);
  return { sendId };
}

/** The address in the form sends store (lowercased email, E.164 phone), or 400 at /to. */
function testAddress(channel: 'email' | 'whatsapp', raw: string): string {
  if (channel === 'email') {
    const email = normalizeEmail(raw);
    if (!email) throw invalid('/to', `'${raw}' is not an email address`);
    return email;
  }
  const phone = normalizePhone(raw);
  if (!phone) throw invalid('/to', `'${raw}' is not a phone number (use the international form, e.g. +14155550100)`);
  return phone;
}
