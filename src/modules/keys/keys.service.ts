import type { Config } from '../../config.js';
import type { ApiKey as KeyItem } from '../../contract/admin/keys.js';
import { decrypt, deriveKey, encrypt, randomBase62, sha256Hex } from '../../crypto.js';
import type { Db } from '../../db/connect.js';
import type { ApiKeysTable } from '../../db/schema.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { iso, isoOrNull } from '../../time.js';
import { getAccount } from '../accounts/accounts.service.js';
import * as repo from './keys.repo.js';
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
  return `hk_${randomBase62(32)}`;
}

export async function createKey(
  db: Db,
  config: Pick<Config, 'secret'>,
  accountId: string,
  input: KeyInput,
): Promise<{ id: string; key: string }> {
  await getAccount(db, accountId);
  const name = input.name.trim();
  if (name.length < 1 || name.length > 255) throw invalid('/name', 'name must be 1 to 255 characters');
  const scopes = checkScopes(input.scopes);
  const id = newId('key');
  const key = generateKeyValue();
  await repo.insertKey(db, accountId, {
    id,
    name,
    key_hash: sha256Hex(key),
    key_encrypted: encrypt(keyCipher(config), key),
    scopes: JSON.stringify(scopes),
    active: input.active === false ? 0 : 1,
    expires_at: input.expiresAt ?? null,
    created_at: Date.now(),
  });
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
  if (!(await repo.updateKeyRow(db, accountId, keyId, values))) throw new AppError('KEY_NOT_FOUND');
  return { id: keyId };
}

export async function deleteKey(db: Db, accountId: string, keyId: string): Promise<void> {
  if (!(await repo.deleteKeyRow(db, accountId, keyId))) throw new AppError('KEY_NOT_FOUND');
}

export async function listKeys(db: Db, accountId: string): Promise<ApiKey[]> {
  return (await repo.listKeyRows(db, accountId)).map(toApiKey);
}

/** The key value, decrypted for an administrator to copy again. */
export async function revealKey(db: Db, config: Pick<Config, 'secret'>, accountId: string, keyId: string): Promise<string> {
  const ciphertext = await repo.findKeyCiphertext(db, accountId, keyId);
  if (ciphertext === undefined) throw new AppError('KEY_NOT_FOUND');
  return decrypt(keyCipher(config), ciphertext);
}

export async function findKeyByValue(db: Db, value: string): Promise<ApiKey | undefined> {
  const row = await repo.findKeyRowByHash(db, sha256Hex(value));
  return row && toApiKey(row);
}

/** One key of the account as the panel lists it, or KEY_NOT_FOUND. */
export async function getKeyItem(db: Db, accountId: string, keyId: string, now = Date.now()): Promise<KeyItem> {
  const key = (await listKeys(db, accountId)).find((k) => k.id === keyId);
  if (!key) throw new AppError('KEY_NOT_FOUND');
  return presentKey(key, now);
}

/** A key as the panel lists it; `state` is computed now, in the order the API checks (inactive, then expired). */
export function presentKey(key: ApiKey, now = Date.now()): KeyItem {
  const state = !key.active ? 'inactive' : key.expiresAt !== null && key.expiresAt <= now ? 'expired' : 'active';
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    active: key.active,
    expiresAt: isoOrNull(key.expiresAt),
    state,
    createdAt: iso(key.createdAt),
  };
}

/** The key checks of the spec, in the order of decisions.md: inactive, expired, then scope. */
export function checkKeyState(key: ApiKey | undefined, scope: Scope, now: number): ApiKey {
  if (!key) throw new AppError('API_KEY_NOT_FOUND');
  if (!key.active) throw new AppError('API_KEY_INACTIVE');
  if (key.expiresAt !== null && key.expiresAt <= now) throw new AppError('API_KEY_EXPIRED');
  if (!key.scopes.includes(scope)) throw missingScope(scope);
  return key;
}

/**
 * The 403 of a missing scope: the spec's message, and `details` naming the scope (decisions.md,
 * Public API). `path` is the request member that needs it (`/lead` for a trigger's lead object),
 * `/` when the call as a whole does.
 */
export function missingScope(scope: Scope, path = '/'): AppError {
  return new AppError('API_KEY_FORBIDDEN', { details: [{ path, message: `requires scope ${scope}` }] });
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
