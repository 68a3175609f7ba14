import type { Kysely, RawBuilder } from 'kysely';
import type { Database, SegmentsTable } from '../../db/schema.js';
import type { FieldRefs } from './segment-criteria.js';

/** SQL of saved segments; the account id is first and part of every WHERE. */
type Q = Kysely<Database>;

export async function insertSegment(q: Q, accountId: string, row: Omit<SegmentsTable, 'account_id'>): Promise<void> {
  await q.insertInto('segments').values({ ...row, account_id: accountId }).execute();
}

export async function selectSegment(q: Q, accountId: string, segmentId: string): Promise<SegmentsTable | undefined> {
  return q.selectFrom('segments').selectAll().where('account_id', '=', accountId).where('id', '=', segmentId).executeTakeFirst();
}

export async function selectSegments(q: Q, accountId: string): Promise<SegmentsTable[]> {
  return q.selectFrom('segments').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
}

/** Rows changed: 0 when the segment is not this account's. */
export async function updateSegment(q: Q, accountId: string, segmentId: string, values: Pick<SegmentsTable, 'name' | 'criteria' | 'updated_at'>): Promise<number> {
  const result = await q.updateTable('segments').set(values).where('account_id', '=', accountId).where('id', '=', segmentId).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function deleteSegment(q: Q, accountId: string, segmentId: string): Promise<number> {
  const result = await q.deleteFrom('segments').where('account_id', '=', accountId).where('id', '=', segmentId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The named custom fields of the account, keyed by lowercased name (how contact writes match them). */
export async function fieldsByName(q: Q, accountId: string, names: string[]): Promise<FieldRefs> {
  if (names.length === 0) return new Map();
  const rows = await q
    .selectFrom('custom_fields')
    .select(['id', 'name', 'name_key', 'type'])
    .where('account_id', '=', accountId)
    .where('name_key', 'in', names.map((n) => n.toLowerCase()))
    .execute();
  return new Map(rows.map((r) => [r.name_key, { id: r.id, name: r.name, type: r.type }]));
}

/** Runs a `select count(*) as n` built by segmentCount. */
export async function runCount(q: Q, query: RawBuilder<{ n: number }>): Promise<number> {
  const { rows } = await query.execute(q);
  return Number(rows[0]?.n ?? 0);
}
