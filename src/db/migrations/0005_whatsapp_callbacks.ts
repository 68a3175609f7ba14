import type { Kysely } from 'kysely';

/**
 * WhatsApp Cloud API callbacks: the verify token of the webhook handshake (encrypted, plus a
 * keyed hash to find the account by it), and an index to find an account by the phone number
 * id every callback names.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  await db.schema.alterTable('accounts').addColumn('whatsapp_verify_token', 'text').execute();
  await db.schema.alterTable('accounts').addColumn('whatsapp_verify_token_hash', 'text').execute();
  await db.schema.createIndex('accounts_whatsapp_verify_token').on('accounts').column('whatsapp_verify_token_hash').execute();
  await db.schema.createIndex('accounts_whatsapp_phone_number').on('accounts').column('whatsapp_phone_number_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('accounts_whatsapp_phone_number').execute();
  await db.schema.dropIndex('accounts_whatsapp_verify_token').execute();
  await db.schema.alterTable('accounts').dropColumn('whatsapp_verify_token_hash').execute();
  await db.schema.alterTable('accounts').dropColumn('whatsapp_verify_token').execute();
}
