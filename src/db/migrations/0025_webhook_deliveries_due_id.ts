import type { Kysely } from 'kysely';

/**
 * The webhook queue's index orders its rows as the claim does: `(status, next_attempt_at, id)`,
 * the id breaking ties in creation order (a send's URLs in the campaign's order). With
 * `(status, next_attempt_at)` alone every claim sorted all the due deliveries to take its few
 * (6 ms a claim on SQLite with 20,000 due, a receiver down for a while): the claim now reads
 * its limit from the index, in order (deliveries.repo.ts, claimDue).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due').execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due').execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
}
