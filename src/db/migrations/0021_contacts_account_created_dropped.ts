import type { Kysely } from 'kysely';

/**
 * `contacts_account_created (account_id, created_at, id)` is read by nothing since
 * contacts_list (0006): every read of an account's contacts names the list it reads
 * (`archived = 0` or `= 1`: the contact list, its count and export, segments), and
 * contacts_list `(account_id, archived, created_at, id, name, opted_out)` gives those the same
 * order; the other reads of contacts go by primary key. Each new contact still wrote an entry
 * here (docs/performance.md, "Fifth session: PostgreSQL server CPU per write").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('contacts_account_created').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('contacts_account_created').on('contacts').columns(['account_id', 'created_at', 'id']).execute();
}
