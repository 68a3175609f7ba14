import type { Kysely } from 'kysely';

/**
 * A version on each contact (issue 12, src/db/write-unit.ts): every write whose rules read the
 * contact's state (a lead write, a trigger, an opt-out) adds one to it, and its single write
 * statement on PostgreSQL applies only `where version = <the version it read>`. PostgreSQL
 * re-checks that condition on the newest version of the row once it holds the row's lock, so
 * two writes to one contact never both act on the same read; the loser reads again. On SQLite
 * (one writer at a time) the condition always holds. Existing rows start at 0.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('contacts')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('contacts').dropColumn('version').execute();
}
