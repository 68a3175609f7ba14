import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { optOutContact } from '../contacts/contacts.service.js';
import { recordUnsubscribe } from '../tracking/tracking.service.js';
import { pageTextsOf } from './page-settings.js';
import * as repo from './unsubscribe.repo.js';
import type { PageBrand } from './unsubscribe-page.js';

/** Who an unsubscribe link speaks for: the send names the account, the contact and the campaign. */
export interface UnsubscribeTarget {
  sendId: string;
  accountId: string;
  contactId: string;
  campaignId: string;
  optedOut: boolean;
  /** A test send from the admin panel: it opts out like any other, but is no campaign's statistic. */
  test: boolean;
  /** A test sent to an address of the tester's choice: its link opts no one out (the contact only lent its data). */
  testToOtherAddress: boolean;
}

export async function findUnsubscribeTarget(db: Db, sendId: string): Promise<UnsubscribeTarget | undefined> {
  const row = await repo.findSendWithContact(db, sendId);
  if (!row) return undefined;
  return {
    sendId: row.id,
    accountId: row.account_id,
    contactId: row.contact_id,
    campaignId: row.campaign_id,
    optedOut: row.opted_out === 1,
    test: Number(row.test) === 1,
    testToOtherAddress: row.test_to !== null,
  };
}

/** The page of the send's account: its name, language and texts (page-settings.ts). */
export async function pageBrandOf(db: Db, accountId: string): Promise<PageBrand> {
  const row = await repo.findPageSettings(db, accountId);
  return { accountName: row?.name ?? '', texts: pageTextsOf(row?.unsubscribe_page) };
}

/**
 * Opts the send's contact out. Conditional on `opted_out = 0`, so a repeat (a mailbox
 * provider's one-click POST and then the recipient's own click) changes nothing more, not
 * even updated_at, and the opt-out is counted once, for the campaign whose link it was.
 * Returns false when the send does not exist.
 */
export async function optOutBySend(db: Db, sendId: string, now = Date.now()): Promise<boolean> {
  const target = await findUnsubscribeTarget(db, sendId);
  if (!target) return false;
  if (target.testToOtherAddress) return true;
  await inTransaction(db, async (tx) => {
    if (!(await optOutContact(tx, target.accountId, target.contactId, now))) return;
    const send = {
      id: target.sendId,
      accountId: target.accountId,
      campaignId: target.campaignId,
      contactId: target.contactId,
      test: target.test,
    };
    await recordUnsubscribe(tx, send, now);
  });
  return true;
}
