import type { Kysely } from 'kysely';

/**
 * Idempotency keys of the public API (issue 10): one row per account and key, written in the
 * transaction of the request's effect, so the answer is stored exactly when the effect is.
 * Rows live 24 hours; `created_at` is indexed for the purge.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    // SHA-256 (hex) of the method, the route and the canonical JSON body.
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    // The answer: null only inside the claiming transaction, before the effect has run.
    .addColumn('status', 'integer')
    .addColumn('body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['account_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
