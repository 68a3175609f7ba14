import type { Db } from '../../db/connect.js';
import { FIELD_TYPES, type FieldType } from '../../contract/constants.js';
import { isUniqueViolation } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { getAccount } from '../accounts/accounts.service.js';

/** Custom fields and KPIs are defined in the account before the API can write them. */
export { FIELD_TYPES, type FieldType };

export interface CustomField {
  id: string;
  name: string;
  type: FieldType;
}

export interface Kpi {
  id: string;
  name: string;
}

export async function createField(db: Db, accountId: string, input: { name: string; type: string }): Promise<CustomField> {
  await getAccount(db, accountId);
  const name = checkName(input.name, '/name');
  if (!(FIELD_TYPES as readonly string[]).includes(input.type)) {
    throw invalid('/type', `type must be one of ${FIELD_TYPES.join(', ')}`);
  }
  const field = { id: newId('fld'), name, type: input.type as FieldType };
  try {
    await db.kysely
      .insertInto('custom_fields')
      .values({ ...field, account_id: accountId, name_key: name.toLowerCase(), created_at: Date.now() })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('CONFLICT', { message: `a custom field named '${name}' already exists` });
    throw err;
  }
  return field;
}

export async function listFields(db: Db, accountId: string): Promise<CustomField[]> {
  return db.kysely.selectFrom('custom_fields').select(['id', 'name', 'type']).where('account_id', '=', accountId).orderBy('name_key').execute();
}

export async function createKpi(db: Db, accountId: string, input: { id: string; name: string }): Promise<Kpi> {
  await getAccount(db, accountId);
  const kpi = { id: checkName(input.id, '/id'), name: checkName(input.name, '/name') };
  try {
    await db.kysely.insertInto('kpis').values({ account_id: accountId, kpi_id: kpi.id, name: kpi.name, created_at: Date.now() }).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('CONFLICT', { message: `a KPI with id '${kpi.id}' already exists` });
    throw err;
  }
  return kpi;
}

export async function listKpis(db: Db, accountId: string): Promise<Kpi[]> {
  return db.kysely.selectFrom('kpis').select(['kpi_id as id', 'name']).where('account_id', '=', accountId).orderBy('kpi_id').execute();
}

function checkName(raw: string, path: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > 255) throw invalid(path, `${path.slice(1)} must be 1 to 255 characters`);
  return name;
}
