import type { CustomField, Kpi } from '../../contract/admin/definitions.js';
import { FIELD_TYPES, type FieldType, MAX_DEFINITION_NAME } from '../../contract/constants.js';
import type { Db } from '../../db/connect.js';
import { inTransaction, isUniqueViolation } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { getAccount } from '../accounts/accounts.service.js';
import { renameFieldInSegments, segmentsNamingField, segmentsNamingKpi, usedBy } from '../segments/field-references.js';
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
  await uniqueFieldName(name, () => repo.insertField(db, accountId, field, Date.now()));
  return field;
}

/**
 * Renames a custom field (docs/decisions.md, Editing and deleting), under the rules of
 * creation (1 to 255 characters, unique ignoring case). Stored values refer to the field by id
 * and stay; saved segments naming it are rewritten in the same transaction. Templates
 * (`{{ contact.fields.Name }}`) and API callers use the name: they must use the new one.
 */
export async function renameField(db: Db, accountId: string, fieldId: string, input: { name: string }): Promise<CustomField> {
  const name = checkName(input.name, '/name');
  return uniqueFieldName(name, () =>
    inTransaction(db, async (tx) => {
      const field = await repo.selectField(tx, accountId, fieldId);
      if (!field) throw new AppError('FIELD_NOT_FOUND');
      await repo.renameField(tx, accountId, fieldId, name);
      await renameFieldInSegments(tx, accountId, field.name_key, name, Date.now());
      return { id: field.id, name, type: field.type };
    }),
  );
}

/**
 * Deletes a custom field and every contact's value of it. Refused (409) while a saved segment
 * names it, so no segment is left with a criterion on a field that does not exist.
 */
export async function deleteField(db: Db, accountId: string, fieldId: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const field = await repo.selectField(tx, accountId, fieldId);
    if (!field) throw new AppError('FIELD_NOT_FOUND');
    const segments = await segmentsNamingField(tx, accountId, field.name_key);
    if (segments.length > 0) throw new AppError('CONFLICT', { message: `custom field '${field.name}' is used by ${usedBy(segments)}` });
    await repo.deleteFieldAndValues(tx, accountId, fieldId);
  });
}

/** Runs a write that sets a field name; the unique (account, lowercased name) constraint answers a taken name. */
async function uniqueFieldName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('CONFLICT', { message: `a custom field named '${name}' already exists` });
    throw err;
  }
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

/**
 * Renames a KPI: its display name only. The id is what the API, templates
 * (`{{ contact.kpis.id }}`) and stored totals use, so it never changes.
 */
export async function renameKpi(db: Db, accountId: string, kpiId: string, input: { name: string }): Promise<Kpi> {
  const name = checkName(input.name, '/name');
  if ((await repo.renameKpi(db, accountId, kpiId, name)) === 0) throw new AppError('KPI_NOT_FOUND');
  return { id: kpiId, name };
}

/**
 * Deletes a KPI and every contact's total of it (an API call naming it afterwards is as for an
 * undefined KPI). Refused (409) while a saved segment compares it, as for fields.
 */
export async function deleteKpi(db: Db, accountId: string, kpiId: string): Promise<void> {
  const deleted = await inTransaction(db, async (tx) => {
    const segments = await segmentsNamingKpi(tx, accountId, kpiId);
    if (segments.length > 0) throw new AppError('CONFLICT', { message: `KPI '${kpiId}' is used by ${usedBy(segments)}` });
    return repo.deleteKpiAndTotals(tx, accountId, kpiId);
  });
  if (deleted === 0) throw new AppError('KPI_NOT_FOUND');
}

function checkName(raw: string, path: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > MAX_DEFINITION_NAME)
    throw invalid(path, `${path.slice(1)} must be 1 to ${MAX_DEFINITION_NAME} characters`);
  return name;
}
