import type { FieldType } from '../../contract/constants.js';
import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { SegmentsTable } from '../../db/schema.js';

/** The custom fields criteria name, keyed by lowercased name (how contact writes match them). */
export type FieldRefs = Map<string, { id: string; name: string; type: FieldType }>;

/** The definitions criteria refer to: fields by lowercased name, and the KPI ids that exist. */
export interface Definitions {
  fields: FieldRefs;
  kpis: Set<string>;
}

/** SQL of saved segments; the account id comes first after the handle and is part of every WHERE. */

export async function insertSegment(db: Queryable, accountId: string, row: Omit<SegmentsTable, 'account_id'>): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('segments')
      .values({ ...row, account_id: accountId })
      .execute(),
  );
}

export async function selectSegment(db: Queryable, accountId: string, segmentId: string): Promise<SegmentsTable | undefined> {
  return kyselyOf(db).selectFrom('segments').selectAll().where('account_id', '=', accountId).where('id', '=', segmentId).executeTakeFirst();
}

export async function selectSegments(db: Queryable, accountId: string): Promise<SegmentsTable[]> {
  return kyselyOf(db).selectFrom('segments').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
}

/** Rows changed: 0 when the segment is not this account's. */
export async function updateSegment(
  db: Queryable,
  accountId: string,
  segmentId: string,
  values: Pick<SegmentsTable, 'name' | 'criteria' | 'updated_at'>,
): Promise<number> {
  const result = await writeOn(db, (q) =>
    q.updateTable('segments').set(values).where('account_id', '=', accountId).where('id', '=', segmentId).executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}

export async function deleteSegment(db: Queryable, accountId: string, segmentId: string): Promise<number> {
  const result = await writeOn(db, (q) =>
    q.deleteFrom('segments').where('account_id', '=', accountId).where('id', '=', segmentId).executeTakeFirst(),
  );
  return Number(result.numDeletedRows);
}

/** The named custom fields of the account, keyed by lowercased name (how contact writes match them). */
export async function fieldsByName(db: Queryable, accountId: string, names: string[]): Promise<FieldRefs> {
  if (names.length === 0) return new Map();
  const rows = await kyselyOf(db)
    .selectFrom('custom_fields')
    .select(['id', 'name', 'name_key', 'type'])
    .where('account_id', '=', accountId)
    .where(
      'name_key',
      'in',
      names.map((n) => n.toLowerCase()),
    )
    .execute();
  return new Map(rows.map((r) => [r.name_key, { id: r.id, name: r.name, type: r.type }]));
}

/** The KPI ids among `ids` that the account defines (ids match exactly). */
export async function existingKpis(db: Queryable, accountId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await kyselyOf(db)
    .selectFrom('kpis')
    .select('kpi_id')
    .where('account_id', '=', accountId)
    .where('kpi_id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.kpi_id));
}

/** The definitions named by criteria: one look-up of fields, one of KPIs. */
export async function definitionsOf(
  db: Queryable,
  accountId: string,
  refs: { fieldNames: string[]; kpiIds: string[] },
): Promise<Definitions> {
  const [fields, kpis] = await Promise.all([
    fieldsByName(db, accountId, [...new Set(refs.fieldNames)]),
    existingKpis(db, accountId, [...new Set(refs.kpiIds)]),
  ]);
  return { fields, kpis };
}
