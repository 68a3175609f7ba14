import { randomBytes } from 'node:crypto';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/connect.js';
import { createAccount, type Plan } from '../../src/modules/accounts/accounts.service.js';
import { createField, createKpi, type FieldType } from '../../src/modules/definitions/definitions.service.js';
import { createKey } from '../../src/modules/keys/keys.service.js';
import { SCOPES } from '../../src/modules/keys/scopes.js';

/** Random text for names and addresses, so tests never collide on a shared database. */
export const uniq = (prefix = 't') => `${prefix}${randomBytes(5).toString('hex')}`;
export const randomEmail = () => `${uniq('user')}@example.com`;
/** A valid, unique French mobile number in E.164. */
export const randomPhone = () => `+336${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;

export async function makeAccount(db: Db, options: { plan?: Plan; allowance?: number | null } = {}) {
  return createAccount(db, { name: uniq('Account '), ...options });
}

export async function makeKey(db: Db, config: Config, accountId: string, options: { scopes?: string[]; active?: boolean; expiresAt?: number | null } = {}) {
  return createKey(db, config, accountId, { name: uniq('key '), scopes: options.scopes ?? [...SCOPES], active: options.active, expiresAt: options.expiresAt });
}

/** A fresh account with an all-scopes key: the usual start of a test. */
export async function makeTenant(db: Db, config: Config, options: { plan?: Plan; scopes?: string[] } = {}) {
  const account = await makeAccount(db, { plan: options.plan });
  const key = await makeKey(db, config, account.id, { scopes: options.scopes });
  return { accountId: account.id, keyId: key.id, key: key.key };
}

export const makeField = (db: Db, accountId: string, name: string, type: FieldType) => createField(db, accountId, { name, type });
export const makeKpi = (db: Db, accountId: string, id: string, name = id) => createKpi(db, accountId, { id, name });
