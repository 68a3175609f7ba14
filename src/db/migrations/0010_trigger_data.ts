import type { Kysely } from 'kysely';

/**
 * Trigger data (issue 10): the optional `data` object of a trigger call, kept with its send as
 * JSON text (null when the call carried none). Templates read it as `{{ trigger.* }}` and the
 * webhook payload carries it as `data.trigger`. Nullable, so existing rows need no rewrite.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sends').addColumn('trigger_data', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sends').dropColumn('trigger_data').execute();
}
