import type { Kysely } from 'kysely';

/**
 * A counter on each account of the counted sends recorded while it has an allowance (issue 12,
 * src/modules/sends/trigger-write.repo.ts). A trigger on PostgreSQL reads this month's count and
 * this counter in its read statement, and its write statement records a counted send only
 * `where <count read> + (allowance_version - <counter read>) < allowance`, adding one to the
 * counter: the counter bounds what was added since the read, and PostgreSQL re-checks the
 * condition on the newest row once it holds the row's lock, so concurrent triggers of one
 * account can never pass the allowance together, and those far from it never retry. Accounts
 * without an allowance never write the row. Existing rows start at 0.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('allowance_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('allowance_version').execute();
}
