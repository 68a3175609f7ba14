import { type RawBuilder, sql } from 'kysely';
import type { Tx } from '../../db/transaction.js';

/** How a `lead` string is looked up (lead-lookup.ts reads it); undefined when it can name no contact. */
export type LeadLookup = { email: string } | { phone: string } | { idOrTracker: string };

/** findContactIdByLeadString's look-up as an SQL expression: the contact's id, or null. */
export function contactIdOfLookupSql(accountId: string, lookup: LeadLookup | undefined): RawBuilder<string | null> {
  if (lookup === undefined) return sql<null>`null`;
  if ('email' in lookup) {
    return sql<string | null>`(select contact_id from contact_emails where account_id = ${accountId} and email = ${lookup.email} limit 1)`;
  }
  if ('phone' in lookup) {
    return sql<string | null>`(select contact_id from contact_phones where account_id = ${accountId} and phone = ${lookup.phone} limit 1)`;
  }
  const value = lookup.idOrTracker;
  return sql<string | null>`coalesce(
    (select id from contacts where account_id = ${accountId} and id = ${value}),
    (select contact_id from trackers where account_id = ${accountId} and tracker = ${value} limit 1))`;
}

/**
 * Locks the row of the contact a `lead` string names, for the rest of the transaction
 * (PostgreSQL; a statement of its own, before the reads that must see what the lock waited for).
 */
export async function lockContactOfLookup(q: Tx, accountId: string, lookup: LeadLookup | undefined): Promise<void> {
  if (lookup === undefined) return;
  await sql`select id from contacts where account_id = ${accountId} and id = ${contactIdOfLookupSql(accountId, lookup)} for update`.execute(
    q,
  );
}
