import type { Kysely } from 'kysely';

/** What recipients did with a send: delivery receipts, opens and clicks (for statistics and the feed). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('engagements')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'text', (c) => c.notNull())
    .addColumn('send_id', 'text', (c) => c.notNull().references('sends.id'))
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('engagements_campaign_kind').on('engagements').columns(['campaign_id', 'kind', 'send_id']).execute();
  await db.schema.createIndex('engagements_contact').on('engagements').columns(['contact_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('engagements').execute();
}
