import { sql } from 'kysely';
import { type Queryable, writeOn } from '../../db/queryable.js';

/**
 * Opts the contact out on the recipient's own word (an unsubscribe link, a WhatsApp STOP).
 * Conditional on `opted_out = 0`: a repeat changes nothing, not even updated_at, so the caller
 * records the opt-out once. True when this call opted the contact out.
 */
export async function optOutContact(db: Queryable, accountId: string, contactId: string, now: number): Promise<boolean> {
  const result = await writeOn(db, (q) =>
    q
      .updateTable('contacts')
      // A new version: a trigger that read the contact before this opt-out reads it again (src/db/write-unit.ts).
      .set({ opted_out: 1, updated_at: now, version: sql`version + 1` })
      .where('account_id', '=', accountId)
      .where('id', '=', contactId)
      .where('opted_out', '=', 0)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows) > 0;
}
