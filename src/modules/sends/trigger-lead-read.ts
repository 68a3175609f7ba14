import { sql } from 'kysely';
import { StatementShapes } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import {
  type ContactWriteRead,
  type ContactWriteReadRow,
  contactWriteReadOf,
  contactWriteReadParts,
  contactWriteReadShape,
} from '../contacts/contact-write-read.js';
import type { PreparedContactWrite } from '../contacts/contacts.service.js';
import { type TriggerState, type TriggerStateRow, triggerStateOf, triggerStateSqlOf, triggerStateValues } from './trigger-state.repo.js';

/** The read's texts, compiled once per shape of the lead's read and engine. */
const READS = new StatementShapes();

/**
 * A trigger with a `lead` object reads in ONE statement, on both engines: the lead write's read
 * (contact-write-read.ts: owners of the sent identifiers, the contact they pick, fields, KPIs)
 * and the trigger's state (trigger-state.repo.ts) for the contact the lookup order picks
 * (coalesce of the owners of id, email, phone). One statement is one snapshot, so both halves
 * describe the same contact. The contact's row is not locked: on PostgreSQL this read runs
 * alone, autocommit (trigger.service.ts; a retry in a transaction takes the general path), so a
 * lock would end with the statement, and the write's guards (version, updated_at, opt-out flag:
 * trigger-write.repo.ts) are what catch a change since; a FOR UPDATE here made each trigger for
 * a known contact a transaction of its own (a transaction id, a WAL record for the lock, a
 * commit flushed to disk). The trigger state's row comes once, joined to each of the read's rows (few: the
 * contact, one per identifier, the fields and KPIs named). The text depends only on the shape of
 * the lead's read (contactWriteReadShape): compiled once per shape (db/constant-statements.ts).
 */
export async function readForLeadTrigger(
  q: Tx,
  accountId: string,
  campaignId: string,
  prepared: PreparedContactWrite,
  now: number,
): Promise<{ read: ContactWriteRead; state: TriggerState }> {
  const readValues = prepared.readValues(accountId);
  // The two halves' names do not collide but for accountId, the same value in both.
  const values = { ...readValues, ...triggerStateValues(accountId, campaignId, now) };
  const result = await READS.run<TriggerStateRow & Partial<ContactWriteReadRow>>(q, contactWriteReadShape(readValues), values, (bind) => {
    const read = contactWriteReadParts(false, readValues, bind);
    const ctes = [...(read.with === undefined ? [] : [read.with]), sql`t as (${triggerStateSqlOf(bind, read.picked)})`];
    const rows = read.rows === undefined ? sql`(select cast(null as text) as kind) w on false` : sql`(${read.rows}) w on true`;
    return sql<TriggerStateRow & Partial<ContactWriteReadRow>>`with ${sql.join(ctes, sql`, `)}
      select t.*, w.* from t left join ${rows}`;
  });
  return {
    read: contactWriteReadOf(result.rows.filter((r): r is TriggerStateRow & ContactWriteReadRow => r.kind != null)),
    state: triggerStateOf(accountId, result.rows[0]),
  };
}
