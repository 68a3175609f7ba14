import type { CustomField, Kpi } from '../../contract/admin/definitions.js';
import { FIELD_TYPES, type FieldType } from '../../contract/constants.js';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { getAccount } from '../accounts/accounts.service.js';
import * as repo from './definitions.repo.js';

export type { CustomField, Kpi } from '../../contract/admin/definitions.js';
/** Custom fields and KPIs are defined in the account before the API can write them. */
export { FIELD_TYPES, type FieldType };

export async function createField(db: Db, accountId: string, input: { name: string; type: string }): Promise<CustomField> {
  await getAccount(db, accountId);
  const name = checkName(input.name, '/name');
  if (!(FIELD_TYPES as readonly string[]).includes(input.type)) {
    throw invalid('/type', `type must be one of ${FIELD_TYPES.join(', ')}`);
  }
  const field = { id: newId('fld'), name, type: input.type as FieldType };
  try {
    await repo.insertField(db, accountId, field, Date.now());
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('CONFLICT', { message: `a custom field named '${name}' already exists` });
    throw err;
  }
  return field;
}

export async function listFields(db: Db, accountId: string): Promise<CustomField[]> {
  return repo.listFieldRows(db, accountId);
}

export async function createKpi(db: Db, accountId: string, input: { id: string; name: string }): Promise<Kpi> {
  await getAccount(db, accountId);
  const kpi = { id: checkName(input.id, '/id'), name: checkName(input.name, '/name') };
  try {
    await repo.insertKpi(db, accountId, kpi, Date.now());
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('CONFLICT', { message: `a KPI with id '${kpi.id}' already exists` });
    throw err;
  }
  return kpi;
}

export async function listKpis(db: Db, accountId: string): Promise<Kpi[]> {
  return repo.listKpiRows(db, accountId);
}

function checkName(raw: string, path: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > 255) throw invalid(path, `${path.slice(1)} must be 1 to 255 characters`);
  return name;
}
