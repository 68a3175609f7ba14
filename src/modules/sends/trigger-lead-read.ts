import { type RawBuilder, sql } from 'kysely';
import { type Bind, StatementShapes } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import {
  type ContactWriteRead,
  type ContactWriteReadRow,
  type ContactWriteReadValues,
  contactWriteReadOf,
  contactWriteReadParts,
  contactWriteReadShape,
} from '../contacts/contact-write-read.js';
import type { PreparedContactWrite } from '../contacts/contacts.service.js';
import { rememberCampaign } from './trigger-campaigns-seen.js';
import { type TriggerState, type TriggerStateRow, triggerStateOf, triggerStateSqlOf, triggerStateValues } from './trigger-state.repo.js';

/** The read's texts, compiled once per shape of the lead's read and engine. */
const READS = new StatementShapes();

/** What a trigger with a `lead` object decides on: the lead write's read and the trigger's state, of one snapshot. */
export interface LeadTriggerRead {
  read: ContactWriteRead;
  state: TriggerState;
}

/** A row of leadTriggerReadSql: the trigger state's columns, and the lead read's (null when it read nothing). */
export type LeadTriggerReadRow = TriggerStateRow & Partial<ContactWriteReadRow>;

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
): Promise<LeadTriggerRead> {
  const readValues = prepared.readValues(accountId);
  const values = leadTriggerReadValues(readValues, campaignId, now);
  const result = await READS.run<LeadTriggerReadRow>(q, contactWriteReadShape(readValues), values, (bind) =>
    leadTriggerReadSql(readValues, bind),
  );
  return leadTriggerReadOf(accountId, campaignId, result.rows);
}

/** What leadTriggerReadSql binds, by name. */
export function leadTriggerReadValues(readValues: ContactWriteReadValues, campaignId: string, now: number) {
  // The two halves' names do not collide but for accountId, the same value in both.
  return { ...readValues, ...triggerStateValues(readValues.accountId, campaignId, now) };
}

/**
 * readForLeadTrigger's select, its values through `bind` (leadTriggerReadValues): one text per
 * shape of the lead's read, to run alone or inside a caller's statement (trigger-decided-first.repo.ts).
 */
export function leadTriggerReadSql(readValues: ContactWriteReadValues, bind: Bind): RawBuilder<LeadTriggerReadRow> {
  const read = contactWriteReadParts(false, readValues, bind);
  const ctes = [...(read.with === undefined ? [] : [read.with]), sql`t as (${triggerStateSqlOf(bind, read.picked)})`];
  const rows = read.rows === undefined ? sql`(select cast(null as text) as kind) w on false` : sql`(${read.rows}) w on true`;
  return sql<LeadTriggerReadRow>`with ${sql.join(ctes, sql`, `)}
      select t.*, w.* from t left join ${rows}`;
}

/** The rows of leadTriggerReadSql as what the rules read; the campaign is remembered (trigger-campaigns-seen.ts). */
export function leadTriggerReadOf(accountId: string, campaignId: string, rows: LeadTriggerReadRow[]): LeadTriggerRead {
  const state = triggerStateOf(accountId, rows[0]);
  rememberCampaign(accountId, campaignId, state.campaign);
  return {
    read: contactWriteReadOf(rows.filter((r): r is TriggerStateRow & ContactWriteReadRow => r.kind != null)),
    state,
  };
}
