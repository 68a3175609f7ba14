import type { FieldType } from '../../contract/constants.js';
import { kyselyOf, type Queryable } from '../../db/queryable.js';

/** SQL of the account's custom field and KPI definitions. */

export async function insertField(
  db: Queryable,
  accountId: string,
  field: { id: string; name: string; type: FieldType },
  now: number,
): Promise<void> {
  await kyselyOf(db)
    .insertInto('custom_fields')
    .values({ ...field, account_id: accountId, name_key: field.name.toLowerCase(), created_at: now })
    .execute();
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
  await kyselyOf(db).insertInto('kpis').values({ account_id: accountId, kpi_id: kpi.id, name: kpi.name, created_at: now }).execute();
}

/** By id. */
export async function listKpiRows(db: Queryable, accountId: string): Promise<{ id: string; name: string }[]> {
  return kyselyOf(db).selectFrom('kpis').select(['kpi_id as id', 'name']).where('account_id', '=', accountId).orderBy('kpi_id').execute();
}
