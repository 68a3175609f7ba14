import { type Kysely, sql } from 'kysely';

/** Campaigns, their webhooks, the sends queue, outbound webhook deliveries and the outbox. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('schedule', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('delay_seconds', 'integer', (c) => c.notNull())
    .addColumn('reentry', 'integer', (c) => c.notNull())
    .addColumn('cooldown_days', 'integer', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('email_from', 'text')
    .addColumn('email_subject', 'text')
    .addColumn('email_html', 'text')
    .addColumn('email_text', 'text')
    .addColumn('whatsapp_template', 'text')
    .addColumn('whatsapp_language', 'text')
    .addColumn('whatsapp_params', 'text', (c) => c.notNull())
    .addColumn('webhook_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('campaigns_account').on('campaigns').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('campaign_webhooks')
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('campaign_webhooks_pk', ['campaign_id', 'position'])
    .execute();

  // A send is a row: the queue lives in the database (design.md).
  await db.schema
    .createTable('sends')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id'))
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('to_address', 'text')
    .addColumn('provider_message_id', 'text')
    .addColumn('processed_at', 'bigint')
    .addColumn('delivered_at', 'bigint')
    .addColumn('sent_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // At most one pending delayed send per contact and campaign: a constraint, not a check in code.
  await db.schema
    .createIndex('sends_one_pending')
    .on('sends')
    .columns(['campaign_id', 'contact_id'])
    .unique()
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema.createIndex('sends_due').on('sends').columns(['status', 'due_at']).execute();
  await db.schema.createIndex('sends_campaign_contact').on('sends').columns(['campaign_id', 'contact_id', 'status']).execute();
  await db.schema.createIndex('sends_account_created').on('sends').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('sends_contact_created').on('sends').columns(['contact_id', 'created_at']).execute();
  await db.schema.createIndex('sends_provider_message').on('sends').columns(['provider_message_id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'text', (c) => c.notNull())
    .addColumn('send_id', 'text', (c) => c.notNull().references('sends.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('webhook_deliveries_send_position', ['send_id', 'position'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_campaign').on('webhook_deliveries').columns(['campaign_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id'))
    .addColumn('attempted_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'attempted_at']).execute();

  // Messages kept when no SMTP server or WhatsApp account is configured.
  await db.schema
    .createTable('outbox_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('send_id', 'text', (c) => c.notNull().references('sends.id'))
    .addColumn('campaign_id', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text')
    .addColumn('subject', 'text')
    .addColumn('html', 'text')
    .addColumn('text', 'text')
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('outbox_account_created').on('outbox_messages').columns(['account_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['outbox_messages', 'webhook_attempts', 'webhook_deliveries', 'sends', 'campaign_webhooks', 'campaigns']) {
    await db.schema.dropTable(table).execute();
  }
}
