import type { Kysely } from 'kysely';

/** Accounts, keys, users, definitions, contacts and events. Column types valid on both engines. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('allowance', 'integer')
    .addColumn('whatsapp_phone_number_id', 'text')
    .addColumn('whatsapp_token', 'text')
    .addColumn('whatsapp_app_secret', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_encrypted', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('custom_fields')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('custom_fields_account_name', ['account_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('kpis')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('kpi_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('kpis_pk', ['account_id', 'kpi_id'])
    .execute();

  await db.schema
    .createTable('contacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('archived', 'integer', (c) => c.notNull())
    .addColumn('opted_out', 'integer', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contacts_account_created').on('contacts').columns(['account_id', 'created_at', 'id']).execute();

  // Emails and phones are unique within an account: the constraint, not code, stops two
  // concurrent creates from making two contacts with the same address.
  await db.schema
    .createTable('contact_emails')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_emails_pk', ['account_id', 'email'])
    .execute();
  await db.schema.createIndex('contact_emails_contact').on('contact_emails').columns(['contact_id', 'position']).execute();

  await db.schema
    .createTable('contact_phones')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_phones_pk', ['account_id', 'phone'])
    .execute();
  await db.schema.createIndex('contact_phones_contact').on('contact_phones').columns(['contact_id', 'position']).execute();

  await db.schema
    .createTable('contact_tags')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('tag', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_tags_pk', ['contact_id', 'tag'])
    .execute();
  await db.schema.createIndex('contact_tags_account_tag').on('contact_tags').columns(['account_id', 'tag']).execute();

  await db.schema
    .createTable('contact_field_values')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('field_id', 'text', (c) => c.notNull().references('custom_fields.id'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_field_values_pk', ['contact_id', 'field_id'])
    .execute();

  await db.schema
    .createTable('contact_kpis')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('kpi_id', 'text', (c) => c.notNull())
    .addColumn('value', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_kpis_pk', ['contact_id', 'kpi_id'])
    .execute();

  await db.schema
    .createTable('contact_notes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contact_notes_contact').on('contact_notes').columns(['contact_id', 'created_at']).execute();

  await db.schema
    .createTable('trackers')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('tracker', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('linked_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('trackers_pk', ['account_id', 'tracker'])
    .execute();
  await db.schema.createIndex('trackers_contact').on('trackers').columns(['contact_id']).execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_contact_time').on('events').columns(['contact_id', 'created_at']).execute();
  // Segments select contacts by event type within a look-back window.
  await db.schema.createIndex('events_account_type_time').on('events').columns(['account_id', 'type', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'events',
    'trackers',
    'contact_notes',
    'contact_kpis',
    'contact_field_values',
    'contact_tags',
    'contact_phones',
    'contact_emails',
    'contacts',
    'kpis',
    'custom_fields',
    'users',
    'api_keys',
    'accounts',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
