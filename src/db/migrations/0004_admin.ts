import type { Kysely } from 'kysely';

/**
 * The admin panel: sign-in sessions and their throttling, saved segments, and the `test` flag
 * of sends made from the panel (delivered like any send, left out of statistics and the
 * monthly allowance).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // The id is the SHA-256 of the cookie's token: a copy of the table signs nobody in.
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
  await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();

  // One row per failed sign-in; counted per email and per IP over the throttling window.
  await db.schema
    .createTable('login_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('login_attempts_email').on('login_attempts').columns(['email', 'created_at']).execute();
  await db.schema.createIndex('login_attempts_ip').on('login_attempts').columns(['ip', 'created_at']).execute();
  await db.schema.createIndex('login_attempts_created').on('login_attempts').column('created_at').execute();

  await db.schema
    .createTable('segments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('criteria', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('segments_account').on('segments').columns(['account_id', 'created_at']).execute();

  // Existing rows are real sends: test = 0 by the default.
  await db.schema
    .alterTable('sends')
    .addColumn('test', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sends').dropColumn('test').execute();
  for (const table of ['segments', 'login_attempts', 'sessions']) await db.schema.dropTable(table).execute();
}
