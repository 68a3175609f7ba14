import type { Kysely } from 'kysely';

/**
 * Deleted campaigns (issue 13, docs/decisions.md, Editing and deleting): a campaign is deleted
 * by setting `deleted_at`, not by removing the row, because its sends, outbox messages,
 * engagements and webhook deliveries keep referring to it (contact activity, history). Every
 * campaign read skips a deleted row, so the API, the panel and the CLI answer "Campaign not
 * found" for it. Nullable: existing rows need no rewrite.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('campaigns').addColumn('deleted_at', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('campaigns').dropColumn('deleted_at').execute();
}
