import type { Kysely } from 'kysely';

/**
 * Bounces (decisions.md, Email): a send whose recipient the SMTP server refused for good is
 * marked `bounced_at`, and its address goes on the account's suppression list, so later sends
 * to that address end before they are tried. The list is per account, channel and address:
 * a contact that gets a new address is reachable again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sends').addColumn('bounced_at', 'bigint').execute();
  await db.schema
    .createTable('suppressed_addresses')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    // As the send was addressed: the lowercased email, or the phone in E.164.
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('send_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('suppressed_addresses_pk', ['account_id', 'channel', 'address'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('suppressed_addresses').execute();
  await db.schema.alterTable('sends').dropColumn('bounced_at').execute();
}
