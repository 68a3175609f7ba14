import type { Db } from '../../db/connect.js';
import { applyEach, applyEachInTransaction, type ItemOutcome } from '../../db/item-transactions.js';
import { analyzeSoon } from '../../db/refresh-statistics.js';
import { inTransaction } from '../../db/transaction.js';
import type { LeadInput } from '../contacts/contacts.schemas.js';
import { type ContactWriteResult, leadItemSteps } from '../contacts/contacts.service.js';

/** The tables a contact write fills. */
const CONTACT_TABLES = ['contacts', 'contact_emails', 'contact_phones', 'contact_tags', 'contact_field_values', 'contact_kpis'];

/** Thrown to roll a dry run back: it carries what the rows would have come to. */
class DryRun {
  constructor(readonly outcomes: ItemOutcome<ContactWriteResult>[]) {}
}

/**
 * `POST /admin/api/contacts/import`: CSV rows the panel mapped to `POST /api/leads` bodies
 * (already checked against that route's schema by runBatch), each written exactly as that
 * route writes it: the same rules, warnings and errors, each row atomic on its own.
 *
 * A dry run (the panel's preview) writes the rows in one transaction and rolls it back, so it
 * finds every error the import would meet, those that depend on the stored contacts too (a
 * name missing for a new contact, an identifier held by another contact), and keeps nothing.
 *
 * On PostgreSQL, a real import that wrote rows has the contact tables analyzed a moment after
 * its last batch (db/refresh-statistics.ts): stale statistics would otherwise plan the
 * imported contacts' filters badly until autovacuum comes by.
 */
export async function importContacts(
  db: Db,
  accountId: string,
  items: readonly LeadInput[],
  dryRun: boolean,
  onAnalyzeError: (error: unknown) => void = () => {},
): Promise<ItemOutcome<ContactWriteResult>[]> {
  // Each row as an item of the leads batch (on PostgreSQL: decided before its read where it can
  // be, such rows' statements sent in pipelines).
  const { apply, plan } = leadItemSteps(db, accountId);
  if (!dryRun) {
    const outcomes = await applyEach(db, items, apply, plan);
    if (outcomes.some((o) => o.ok)) analyzeSoon(db, CONTACT_TABLES, onAnalyzeError);
    return outcomes;
  }
  try {
    await inTransaction(db, async (tx) => {
      throw new DryRun(await applyEachInTransaction(tx, items, apply));
    });
  } catch (error) {
    if (error instanceof DryRun) return error.outcomes;
    throw error;
  }
  throw new Error('unreachable: a dry run always rolls back');
}
