import type { Insertable } from 'kysely';
import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { ApiKeysTable } from '../../db/schema.js';

/** SQL of the API keys. */

export async function insertKey(db: Queryable, accountId: string, row: Omit<Insertable<ApiKeysTable>, 'account_id'>): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('api_keys')
      .values({ ...row, account_id: accountId })
      .execute(),
  );
}

/** Whether the account has the key; sets the values when there are any. */
export async function updateKeyRow(db: Queryable, accountId: string, keyId: string, values: Partial<ApiKeysTable>): Promise<boolean> {
  return writeOn(db, async (q) => {
    if (Object.keys(values).length === 0) {
      return (
        (await q.selectFrom('api_keys').select('id').where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst()) !==
        undefined
      );
    }
    const result = await q
      .updateTable('api_keys')
      .set(values)
      .where('account_id', '=', accountId)
      .where('id', '=', keyId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  });
}

export async function deleteKeyRow(db: Queryable, accountId: string, keyId: string): Promise<boolean> {
  const result = await writeOn(db, (q) =>
    q.deleteFrom('api_keys').where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst(),
  );
  return Number(result.numDeletedRows) > 0;
}

/** Oldest first. */
export async function listKeyRows(db: Queryable, accountId: string): Promise<ApiKeysTable[]> {
  return kyselyOf(db).selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
}

export async function findKeyCiphertext(db: Queryable, accountId: string, keyId: string): Promise<string | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('api_keys')
    .select('key_encrypted')
    .where('account_id', '=', accountId)
    .where('id', '=', keyId)
    .executeTakeFirst();
  return row?.key_encrypted;
}

/** The one look-up without an account id: finding the key's account is its purpose (API authentication). */
export async function findKeyRowByHash(db: Queryable, keyHash: string): Promise<ApiKeysTable | undefined> {
  return kyselyOf(db).selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}
