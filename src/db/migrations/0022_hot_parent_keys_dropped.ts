import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * PostgreSQL only: the foreign keys of the per-request inserts whose parent row is never
 * deleted go (docs/decisions.md, "No row lock on an account or campaign per write"):
 * `contacts.account_id -> accounts`, `idempotency_keys.account_id -> accounts` and
 * `sends.campaign_id -> campaigns`. Nothing deletes an account or a campaign (a campaign is
 * deleted softly, `deleted_at`), and every insert takes those ids from a row it just read
 * (the API key's account, the campaign the trigger loaded), so the keys never refused
 * anything. What they cost: PostgreSQL checks a key by locking the parent row (`FOR KEY
 * SHARE`), so every new contact and every send wrote a lock into its account's or campaign's
 * row (a WAL record, a dirtied page), and concurrent writers of one account or campaign each
 * made a new MultiXact of all the lockers: one hot row per tenant that every request wrote.
 * SQLite checks a key with an index probe and no write: its keys stay.
 */
const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

const KEYS = [
  { table: 'contacts', column: 'account_id', parent: 'accounts' },
  { table: 'idempotency_keys', column: 'account_id', parent: 'accounts' },
  { table: 'sends', column: 'campaign_id', parent: 'campaigns' },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const { table, column } of KEYS) {
    await sql`alter table ${sql.table(table)} drop constraint if exists ${sql.id(`${table}_${column}_fkey`)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const { table, column, parent } of KEYS) {
    await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_${column}_fkey`)}
      foreign key (${sql.id(column)}) references ${sql.table(parent)} (id)`.execute(db);
  }
}
