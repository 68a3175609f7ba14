import type { AdminContactProfile, ContactEditBody } from '../../contract/admin/contacts.js';
import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { applyContactWrite } from './contact-write.js';
import { contactProfile } from './contacts.admin.service.js';
import * as repo from './contacts.repo.js';

/**
 * The contact page's edit of name, tags, custom fields and KPI increments: the write of
 * `POST /api/leads` (applyContactWrite, every rule of it) on this contact. What the API skips
 * with a warning (an unknown field, a value in the wrong format, a KPI out of range) is a 400
 * here with the same paths, and the transaction is rolled back: an operator typing in a form
 * wants to be told, and a half-applied form would be a surprise. Another account's id is 404.
 */
export async function editContact(db: Db, accountId: string, contactId: string, edit: ContactEditBody): Promise<AdminContactProfile> {
  await inTransaction(db, async (tx) => {
    if ((await repo.findContactIdById(tx, accountId, contactId)) === undefined) throw new AppError('LEAD_NOT_FOUND');
    const { warnings } = await applyContactWrite(tx, accountId, { ...edit, id: contactId }, Date.now());
    if (warnings.length > 0) throw new AppError('VALIDATION', { details: warnings });
  });
  return contactProfile(db, accountId, contactId);
}
