import type { Kysely } from 'kysely';

/**
 * Sign-in throttling by counter instead of by failure rows: one row per email and one per
 * client address, whose attempt count is raised by a single upsert before the password is
 * checked, so concurrent guesses (in one process or many) cannot all be checked.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('login_throttle')
    // `email:<email>` or `ip:<address>`.
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('login_throttle_window').on('login_throttle').column('window_start').execute();
  // The failures counted so far are dropped: at worst a guesser gets one fresh window.
  await db.schema.dropTable('login_attempts').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
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
  await db.schema.dropTable('login_throttle').execute();
}
