import { type RawBuilder, sql } from 'kysely';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { Tx } from '../../db/transaction.js';

/**
 * The look-up of one contact's id as a piece of SQL, for other modules to embed in their own
 * single statement (issue 12: an event's insert, a cancel's update) instead of running it as a
 * statement of its own. Each piece is scoped by the account, like every look-up of this module.
 * They run unchanged on both engines.
 */

/** What names a contact: its id, a linked visitor id, a stored email or phone, or the id first and then a visitor id. */
export type ContactKey = { id: string } | { tracker: string } | { email: string } | { phone: string } | { idOrTracker: string };

/**
 * A select of zero or one row whose one column, `contact_id`, is the contact the key names in
 * the account. Emails, phones and visitor ids are unique within an account (their constraints),
 * so none of these finds two rows.
 */
export function contactIdSelect(accountId: string, key: ContactKey): RawBuilder<{ contact_id: string }> {
  if ('id' in key) return sql`select id as contact_id from contacts where account_id = ${accountId} and id = ${key.id}`;
  if ('tracker' in key) return sql`select contact_id from trackers where account_id = ${accountId} and tracker = ${key.tracker}`;
  if ('email' in key) return sql`select contact_id from contact_emails where account_id = ${accountId} and email = ${key.email}`;
  if ('phone' in key) return sql`select contact_id from contact_phones where account_id = ${accountId} and phone = ${key.phone}`;
  // A contact id wins over a visitor id with the same text: the first non-null of the two.
  const id = contactIdSelect(accountId, { id: key.idOrTracker });
  const tracker = contactIdSelect(accountId, { tracker: key.idOrTracker });
  return sql`select contact_id from (select coalesce((${id}), (${tracker})) as contact_id) either where contact_id is not null`;
}

/** The contact id the key names as a scalar expression: null when the account has no such contact. */
export function contactIdExpression(accountId: string, key: ContactKey | undefined): RawBuilder<string | null> {
  return key === undefined ? sql`cast(null as text)` : sql`(select contact_id from (${contactIdSelect(accountId, key)}) named)`;
}

/** The contact the key names in the account, in one statement; undefined when none. */
export async function findContactId(db: Queryable, accountId: string, key: ContactKey): Promise<string | undefined> {
  const { rows } = await contactIdSelect(accountId, key).execute(kyselyOf(db));
  return rows[0]?.contact_id;
}

/**
 * Locks the row of the contact the key names for the rest of the transaction (PostgreSQL): a
 * statement of its own, before the reads that must see what the lock waited for.
 */
export async function lockContactOf(q: Tx, accountId: string, key: ContactKey): Promise<void> {
  await sql`select id from contacts where account_id = ${accountId} and id = ${contactIdExpression(accountId, key)} for update`.execute(q);
}
