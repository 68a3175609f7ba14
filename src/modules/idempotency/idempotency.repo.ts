import { sql } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { writeLater } from '../../db/pg-transaction.js';
import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { Tx } from '../../db/transaction.js';

/** SQL of the idempotency keys: one row per account and key (src/db/migrations/0009_idempotency_keys.ts). */

export interface KeyClaim {
  key: string;
  fingerprint: string;
  now: number;
  /** Rows created at or before it are expired: ignored and replaced. */
  expiredBy: number;
}

/**
 * Claims the key inside the effect's transaction: inserts the row (answer still null), or
 * takes over an expired one. False when a live row exists, or, on PostgreSQL, when another
 * transaction holds the key right now: there a transaction-scoped advisory lock on the key is
 * taken first without waiting, so a concurrent duplicate is told at once instead of queueing
 * behind the first on the primary key (and the insert below then never waits either). On
 * SQLite transactions are serial: an uncommitted claim of another request is never met.
 */
export async function claimKey(db: Queryable, engine: Engine, accountId: string, claim: KeyClaim): Promise<boolean> {
  const { key, fingerprint, now, expiredBy } = claim;
  if (engine === 'postgres') {
    // WHERE before ON CONFLICT: PostgreSQL needs it to parse an INSERT ... SELECT with ON CONFLICT.
    const { rows } = await writeOn(db, (q) =>
      sql<{ claimed: number }>`
      insert into idempotency_keys (account_id, key, fingerprint, status, body, created_at)
      select ${accountId}, ${key}, ${fingerprint}, null, null, ${now}
      where pg_try_advisory_xact_lock(hashtext(${accountId}), hashtext(${key}))
      on conflict (account_id, key) do update
        set fingerprint = excluded.fingerprint, status = null, body = null, created_at = excluded.created_at
        where idempotency_keys.created_at <= ${expiredBy}
      returning 1 as claimed`.execute(q),
    );
    return rows.length > 0;
  }
  const row = await writeOn(db, (q) =>
    q
      .insertInto('idempotency_keys')
      .values({ account_id: accountId, key, fingerprint, status: null, body: null, created_at: now })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'key'])
          .doUpdateSet({ fingerprint, status: null, body: null, created_at: now })
          .where('idempotency_keys.created_at', '<=', expiredBy),
      )
      .returning('created_at')
      .executeTakeFirst(),
  );
  return row !== undefined;
}

/**
 * Stores the answer in the row claimed by the same transaction. Nothing waits on its result: on
 * PostgreSQL it goes out with the transaction's COMMIT (db/pg-transaction.ts writeLater), which
 * it fails if it fails, so the effect never commits without its answer.
 */
export async function storeAnswer(tx: Tx, accountId: string, key: string, status: number, body: string): Promise<void> {
  await writeLater(tx, tx.updateTable('idempotency_keys').set({ status, body }).where('account_id', '=', accountId).where('key', '=', key));
}

/** The live (unexpired) row of the key, as committed. */
export async function findLiveKey(db: Queryable, accountId: string, key: string, expiredBy: number) {
  return kyselyOf(db)
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status', 'body'])
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .where('created_at', '>', expiredBy)
    .executeTakeFirst();
}

/** Every account's expired rows (the purge). */
export async function deleteExpiredKeys(db: Queryable, expiredBy: number): Promise<number> {
  const result = await writeOn(db, (q) => q.deleteFrom('idempotency_keys').where('created_at', '<=', expiredBy).executeTakeFirst());
  return Number(result.numDeletedRows);
}
