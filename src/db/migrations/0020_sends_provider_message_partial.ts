import type { Kysely } from 'kysely';

/**
 * `sends.provider_message_id` is looked up by equality only (a WhatsApp status callback's
 * wamid), and is null until a send goes out: the index kept an entry for the null of every
 * send created and replaced it when the send went, two B-tree writes per send for look-ups that
 * never ask for a null. Partial, it is written once, when the id arrives. Both engines use a
 * partial index `where x is not null` for `x = ?` (equality implies not null).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sends_provider_message').execute();
  await db.schema
    .createIndex('sends_provider_message')
    .on('sends')
    .column('provider_message_id')
    .where('provider_message_id', 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sends_provider_message').execute();
  await db.schema.createIndex('sends_provider_message').on('sends').column('provider_message_id').execute();
}
