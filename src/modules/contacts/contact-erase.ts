import type { ContactErased } from '../../contract/admin/contacts.js';
import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import * as erase from './contact-erase.repo.js';
import * as repo from './contacts.repo.js';

/**
 * Erases a contact for good (GDPR right to erasure; docs/decisions.md, Erasing a contact): the
 * contact and everything that names them go; their sends and engagements stay as anonymous
 * rows, so every campaign statistic reads the same afterwards. One transaction: an erase that
 * fails leaves the contact whole. Sends still waiting are cancelled first, so nothing is sent
 * after it (the dispatcher claims only pending or queued rows, with a conditional update).
 * Another account's contact is LEAD_NOT_FOUND, like an unknown one.
 */
export async function eraseContact(db: Db, accountId: string, contactId: string): Promise<ContactErased> {
  return inTransaction(db, async (tx) => {
    if ((await repo.findContactIdById(tx, accountId, contactId)) === undefined) throw new AppError('LEAD_NOT_FOUND');
    const [emails, phones] = await Promise.all([repo.listEmails(tx, accountId, contactId), repo.listPhones(tx, accountId, contactId)]);
    const addresses = [...emails, ...phones];
    const now = Date.now();

    const sendsCancelled = await erase.cancelWaitingSends(tx, accountId, contactId, now);
    // Found through the contact's sends: before the sends stop naming the contact.
    await erase.deleteWebhookDeliveries(tx, accountId, contactId);
    await erase.deleteOutboxMessages(tx, accountId, contactId);
    await erase.deleteSuppressions(tx, accountId, contactId, addresses);
    await erase.deleteIdempotentAnswers(tx, accountId, [contactId, ...addresses]);
    const sendsAnonymized = await erase.anonymizeSends(tx, accountId, contactId);
    await erase.anonymizeEngagements(tx, accountId, contactId);
    const { events } = await erase.deleteContactRows(tx, accountId, contactId);
    return { id: contactId, sendsAnonymized, sendsCancelled, events };
  });
}
