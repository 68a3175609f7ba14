import { type Kysely, sql } from 'kysely';

/**
 * The monthly allowance's count reads an index of the counted sends only (decisions.md, Plans).
 * `sends_account_created (account_id, created_at)` was read by that count alone, and held every
 * send: a trigger of an account with an allowance read all of the month's sends, rejected,
 * opted-out, cancelled and test sends included. Partial on the counted statuses, the count reads
 * at most the sends the allowance lets through, and a send that will never count writes no entry.
 *
 * The predicate is the text the count writes (sends.repo.ts, COUNTED_SENDS), term for term:
 * SQLite uses a partial index only for a query whose WHERE contains each of its terms as written.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index sends_counted on sends (account_id, created_at)
    where status in ('pending', 'queued', 'sending', 'sent', 'error') and test = 0`.execute(db);
  await db.schema.dropIndex('sends_account_created').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('sends_account_created').on('sends').columns(['account_id', 'created_at']).execute();
  await db.schema.dropIndex('sends_counted').execute();
}
