import type { FieldType } from '../../contract/constants.js';
import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';

/** SQL of the account's custom field and KPI definitions. */

export async function insertField(
  db: Queryable,
  accountId: string,
  field: { id: string; name: string; type: FieldType },
  now: number,
): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('custom_fields')
      .values({ ...field, account_id: accountId, name_key: field.name.toLowerCase(), created_at: now })
      .execute(),
  );
}

/** By name, case-insensitively. */
export async function listFieldRows(db: Queryable, accountId: string): Promise<{ id: string; name: string; type: FieldType }[]> {
  return kyselyOf(db)
    .selectFrom('custom_fields')
    .select(['id', 'name', 'type'])
    .where('account_id', '=', accountId)
    .orderBy('name_key')
    .execute();
}

export async function insertKpi(db: Queryable, accountId: string, kpi: { id: string; name: string }, now: number): Promise<void> {
  await writeOn(db, (q) =>
    q.insertInto('kpis').values({ account_id: accountId, kpi_id: kpi.id, name: kpi.name, created_at: now }).execute(),
  );
}

/** By id. */
export async function listKpiRows(db: Queryable, accountId: string): Promise<{ id: string; name: string }[]> {
  return kyselyOf(db).selectFrom('kpis').select(['kpi_id as id', 'name']).where('account_id', '=', accountId).orderBy('kpi_id').execute();
}

export async function selectField(
  db: Queryable,
  accountId: string,
  fieldId: string,
): Promise<{ id: string; name: string; name_key: string; type: FieldType } | undefined> {
  return kyselyOf(db)
    .selectFrom('custom_fields')
    .select(['id', 'name', 'name_key', 'type'])
    .where('account_id', '=', accountId)
    .where('id', '=', fieldId)
    .executeTakeFirst();
}

/** Renames the field; its stored values refer to it by id, so they stay. Rows changed: 0 when not this account's. */
export async function renameField(db: Queryable, accountId: string, fieldId: string, name: string): Promise<number> {
  const result = await writeOn(db, (q) =>
    q
      .updateTable('custom_fields')
      .set({ name, name_key: name.toLowerCase() })
      .where('account_id', '=', accountId)
      .where('id', '=', fieldId)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}

/** Deletes the field and every contact's value of it (values first: they reference the definition). */
export async function deleteFieldAndValues(db: Queryable, accountId: string, fieldId: string): Promise<number> {
  await writeOn(db, (q) =>
    q.deleteFrom('contact_field_values').where('account_id', '=', accountId).where('field_id', '=', fieldId).execute(),
  );
  const result = await writeOn(db, (q) =>
    q.deleteFrom('custom_fields').where('account_id', '=', accountId).where('id', '=', fieldId).executeTakeFirst(),
  );
  return Number(result.numDeletedRows);
}

/** Renames the KPI (its display name; the id the API uses never changes). Rows changed: 0 when not this account's. */
export async function renameKpi(db: Queryable, accountId: string, kpiId: string, name: string): Promise<number> {
  const result = await writeOn(db, (q) =>
    q.updateTable('kpis').set({ name }).where('account_id', '=', accountId).where('kpi_id', '=', kpiId).executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}

/** Deletes the KPI and every contact's total of it. */
export async function deleteKpiAndTotals(db: Queryable, accountId: string, kpiId: string): Promise<number> {
  await writeOn(db, (q) => q.deleteFrom('contact_kpis').where('account_id', '=', accountId).where('kpi_id', '=', kpiId).execute());
  const result = await writeOn(db, (q) =>
    q.deleteFrom('kpis').where('account_id', '=', accountId).where('kpi_id', '=', kpiId).executeTakeFirst(),
  );
  return Number(result.numDeletedRows);
}
