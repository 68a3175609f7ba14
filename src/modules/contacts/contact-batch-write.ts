import type { Db } from '../../db/connect.js';
import { applyEach, applyEachInTransaction, type ItemOutcome, type Plan } from '../../db/item-transactions.js';
import { inTransaction, type Tx } from '../../db/transaction.js';
import { type IdempotentBatch, oncePerKey } from '../idempotency/idempotency.service.js';
import { applyContactWrite, type ContactWriteResult, plannedContactWrite } from './contact-write.js';
import type { LeadInput } from './contacts.schemas.js';

/**
 * `POST /api/leads/batch`: each item exactly as `writeContact` (applyContactWrite, the same
 * rules), in order, so an item sees the items before it (the same email twice: the second
 * updates the contact the first created); as few transactions as the engine allows
 * (db/item-transactions.ts). One outcome per item: a failed item changed nothing.
 */
export async function writeContacts(
  db: Db,
  accountId: string,
  inputs: readonly LeadInput[],
  keyed?: IdempotentBatch<ItemOutcome<ContactWriteResult>[]>,
): Promise<ItemOutcome<ContactWriteResult>[]> {
  const { apply, plan } = leadItemSteps(db, accountId);
  if (!keyed) return applyEach(db, inputs, apply, plan);
  // With an Idempotency-Key the whole batch is one transaction: its answer is stored with all of it.
  return inTransaction(db, (tx) => oncePerKey(tx, keyed.request, () => applyEachInTransaction(tx, inputs, apply), keyed.answer));
}

/**
 * How a lead write that is one item of many (a batch's, a CSV import's row) is applied, for
 * applyEach. On PostgreSQL an item is decided before its read where it can be, as a single call
 * is: one statement instead of two in its chunk's transaction, sent with its neighbours' in one
 * round trip (`plan`: plannedContactWrite; db/item-transactions.ts). SQLite has no plan.
 */
export function leadItemSteps(
  db: Db,
  accountId: string,
): { apply: (tx: Tx, input: LeadInput) => Promise<ContactWriteResult>; plan?: Plan<LeadInput, ContactWriteResult> } {
  const writeFirst = db.engine === 'postgres';
  return {
    apply: (tx, input) => applyContactWrite(tx, accountId, input, Date.now(), '', { writeFirst, inTransaction: true }),
    plan: writeFirst ? (tx, input) => plannedContactWrite(tx, accountId, input, Date.now()) : undefined,
  };
}
