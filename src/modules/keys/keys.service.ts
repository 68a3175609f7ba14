import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { ApiKeysTable } from '../../db/schema.js';
import { decrypt, deriveKey, encrypt, randomBase62, sha256Hex } from '../../crypto.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { getAccount } from '../accounts/accounts.service.js';
import { isScope, type Scope } from './scopes.js';

/** A key as the rest of the app sees it: never the stored hash or ciphertext. */
export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  scopes: Scope[];
  active: boolean;
  expiresAt: number | null;
  createdAt: number;
}

export interface KeyInput {
  name: string;
  scopes: string[];
  active?: boolean;
  expiresAt?: number | null;
}

const keyCipher = (config: Pick<Config, 'secret'>) => deriveKey(config.secret, 'api-keys');

/** `hk_` + 32 random base62 characters (decisions.md, API keys). */
export function generateKeyValue(): string {
  return 'hk_' + randomBase62(32);
}

export async function createKey(db: Db, config: Pick<Config, 'secret'>, accountId: string, input: KeyInput): Promise<{ id: string; key: string }> {
  await getAccount(db, accountId);
  const name = input.name.trim();
  if (name.length < 1 || name.length > 255) throw invalid('/name', 'name must be 1 to 255 characters');
  const scopes = checkScopes(input.scopes);
  const id = newId('key');
  const key = generateKeyValue();
  await db.kysely
    .insertInto('api_keys')
    .values({
      id,
      account_id: accountId,
      name,
      key_hash: sha256Hex(key),
      key_encrypted: encrypt(keyCipher(config), key),
      scopes: JSON.stringify(scopes),
      active: input.active === false ? 0 : 1,
      expires_at: input.expiresAt ?? null,
      created_at: Date.now(),
    })
    .execute();
  return { id, key };
}

export interface KeyUpdate {
  name?: string;
  scopes?: string[];
  active?: boolean;
  expiresAt?: number | null;
}

export async function updateKey(db: Db, accountId: string, keyId: string, update: KeyUpdate): Promise<{ id: string }> {
  const values: Partial<ApiKeysTable> = {};
  if (update.name !== undefined) {
    const name = update.name.trim();
    if (name.length < 1 || name.length > 255) throw invalid('/name', 'name must be 1 to 255 characters');
    values.name = name;
  }
  if (update.scopes !== undefined) values.scopes = JSON.stringify(checkScopes(update.scopes));
  if (update.active !== undefined) values.active = update.active ? 1 : 0;
  if (update.expiresAt !== undefined) values.expires_at = update.expiresAt;
  const found = Object.keys(values).length
    ? Number((await db.kysely.updateTable('api_keys').set(values).where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst()).numUpdatedRows) > 0
    : (await db.kysely.selectFrom('api_keys').select('id').where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst()) !== undefined;
  if (!found) throw new AppError('KEY_NOT_FOUND');
  return { id: keyId };
}

export async function deleteKey(db: Db, accountId: string, keyId: string): Promise<void> {
  const result = await db.kysely.deleteFrom('api_keys').where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new AppError('KEY_NOT_FOUND');
}

export async function listKeys(db: Db, accountId: string): Promise<ApiKey[]> {
  const rows = await db.kysely.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toApiKey);
}

/** The key value, decrypted for an administrator to copy again. */
export async function revealKey(db: Db, config: Pick<Config, 'secret'>, accountId: string, keyId: string): Promise<string> {
  const row = await db.kysely.selectFrom('api_keys').select('key_encrypted').where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst();
  if (!row) throw new AppError('KEY_NOT_FOUND');
  return decrypt(keyCipher(config), row.key_encrypted);
}

export async function findKeyByValue(db: Db, value: string): Promise<ApiKey | undefined> {
  const row = await db.kysely.selectFrom('api_keys').selectAll().where('key_hash', '=', sha256Hex(value)).executeTakeFirst();
  return row && toApiKey(row);
}

/** The key checks of the spec, in the order of decisions.md: inactive, expired, then scope. */
export function checkKeyState(key: ApiKey | undefined, scope: Scope, now: number): ApiKey {
  if (!key) throw new AppError('API_KEY_NOT_FOUND');
  if (!key.active) throw new AppError('API_KEY_INACTIVE');
  if (key.expiresAt !== null && key.expiresAt <= now) throw new AppError('API_KEY_EXPIRED');
  if (!key.scopes.includes(scope)) throw new AppError('API_KEY_FORBIDDEN');
  return key;
}

function checkScopes(scopes: string[]): Scope[] {
  const unique = [...new Set(scopes.map((s) => s.trim()).filter(Boolean))];
  if (unique.length === 0) throw invalid('/scopes', 'at least one scope is required');
  const unknown = unique.find((s) => !isScope(s));
  if (unknown !== undefined) throw invalid('/scopes', `unknown scope '${unknown}'`);
  return unique as Scope[];
}

function toApiKey(row: ApiKeysTable): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as Scope[],
    active: row.active === 1,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}
