import type { Kysely } from 'kysely';

/**
 * Authoring (issue 13, item 9; decisions.md "Authoring"):
 * - `accounts.unsubscribe_page`: the account's texts and language of the recipient's
 *   unsubscribe page, as JSON text; null keeps the English defaults.
 * - `sends.test_to`: the address a test send goes to instead of the contact's own (a test to
 *   any address from the admin panel); null for every other send.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('unsubscribe_page', 'text').execute();
  await db.schema.alterTable('sends').addColumn('test_to', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sends').dropColumn('test_to').execute();
  await db.schema.alterTable('accounts').dropColumn('unsubscribe_page').execute();
}
