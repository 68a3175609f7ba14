import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';

/** SQL of field-references.ts: the account's segments' criteria, read and rewritten whole. */

export async function selectSegmentCriteria(db: Queryable, accountId: string): Promise<{ id: string; name: string; criteria: string }[]> {
  return kyselyOf(db).selectFrom('segments').select(['id', 'name', 'criteria']).where('account_id', '=', accountId).execute();
}

export async function updateSegmentCriteria(db: Queryable, accountId: string, segmentId: string, criteria: string, now: number) {
  await writeOn(db, (q) =>
    q.updateTable('segments').set({ criteria, updated_at: now }).where('account_id', '=', accountId).where('id', '=', segmentId).execute(),
  );
}
