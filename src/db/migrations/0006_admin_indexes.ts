import type { Kysely } from 'kysely';

/**
 * Indexes for the admin panel's reads on large accounts (bench/admin-queries.ts measures them
 * at 100,000 contacts and 1,000,000 events).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // The contact list and search, newest first, answered from the index alone: the listed /
  // archived split, the order, and every column a list row shows but addresses and tags. A
  // word-prefix search of names scans this instead of the table rows, which carry metadata.
  await db.schema
    .createIndex('contacts_list')
    .on('contacts')
    .columns(['account_id', 'archived', 'created_at', 'id', 'name', 'opted_out'])
    .execute();

  // Segments ask, per contact, "an event of this type since then?": one seek here answers it.
  // It replaces events_account_type_time (read by segments only), so events keep the same
  // number of indexes to maintain on every write.
  await db.schema
    .createIndex('events_account_type_contact_time')
    .on('events')
    .columns(['account_id', 'type', 'contact_id', 'created_at'])
    .execute();
  await db.schema.dropIndex('events_account_type_time').execute();

  // An early version of 0004 made this one; segments read field values by contact instead.
  await db.schema.dropIndex('contact_field_values_field').ifExists().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_account_type_time').on('events').columns(['account_id', 'type', 'created_at']).execute();
  await db.schema.dropIndex('events_account_type_contact_time').execute();
  await db.schema.dropIndex('contacts_list').execute();
}
