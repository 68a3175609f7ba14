import { sql } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { type Bind, StatementShapes } from '../../db/constant-statements.js';
import { type Queryable, writeOn } from '../../db/queryable.js';
import type { CampaignsTable } from '../../db/schema.js';
import { contactIdOfLookupSql, type LeadLookup } from '../contacts/lead-lookup.js';

/** What a cancel's answer rests on, read by the statement that cancels (cancel.service.ts decides). */
export interface CancelFacts {
  /** The campaign's schedule; undefined when the account has no such campaign, or it is deleted. */
  schedule: CampaignsTable['schedule'] | undefined;
  /** The contact the lead names; undefined when none. */
  contactId: string | undefined;
  /** Whether this statement turned a pending send into a cancelled one. */
  cancelled: boolean;
}

/**
 * Cancels the contact's pending send of the campaign if there is one and the campaign may be
 * cancelled through the API, and reads the facts the answer rests on: ONE statement on
 * PostgreSQL (a data-modifying CTE, autocommit: one round trip), two in the caller's
 * transaction on SQLite (which has no UPDATE in a CTE).
 *
 * The update is guarded by the same conditions cancel.service.ts checks (a live campaign whose
 * schedule is `api`, a contact found), so it changes nothing in a case the service refuses.
 * The campaign and the contact are read as of the statement's start (READ COMMITTED); the send
 * is not: `status = 'pending'` is re-checked by PostgreSQL on the newest version of the row once
 * it holds the row's lock, so a send a worker claimed or a request cancelled meanwhile is left
 * alone and `cancelled` is false. `cancelled` is true only when this statement cancelled it.
 */
export async function cancelPendingSend(
  db: Queryable,
  engine: Engine,
  accountId: string,
  campaignId: string,
  lead: LeadLookup | undefined,
  now: number,
): Promise<CancelFacts> {
  return writeOn(db, async (q) => {
    // The text depends only on how the lead is looked up (db/constant-statements.ts): compiled once per kind.
    const [kind, value] = lead === undefined ? ['none', undefined] : Object.entries(lead)[0]!;
    const values = { accountId, campaignId, now, lead: value };
    type Row = { schedule: CampaignsTable['schedule'] | null; contact_id: string | null };
    const factsOf = (row: Row | undefined, cancelled: boolean): CancelFacts => ({
      schedule: row?.schedule ?? undefined,
      contactId: row?.contact_id ?? undefined,
      cancelled,
    });
    if (engine === 'postgres') {
      const { rows } = await STATEMENTS.run(q, `cancel ${kind}`, values, (bind) => {
        const { cancel, facts } = cancelSql(bind, kind);
        return sql<
          Row & { cancelled: number | string }
        >`with cancelled as (${cancel}) select ${facts}, (select count(*) from cancelled) as cancelled`;
      });
      return factsOf(rows[0], Number(rows[0]?.cancelled) > 0);
    }
    const cancelled = (await STATEMENTS.run(q, `update ${kind}`, values, (bind) => cancelSql(bind, kind).cancel)).rows.length > 0;
    const facts = await STATEMENTS.run(q, `facts ${kind}`, values, (bind) => sql<Row>`select ${cancelSql(bind, kind).facts}`);
    return factsOf(facts.rows[0], cancelled);
  });
}

const STATEMENTS = new StatementShapes();

/** The cancel's update and the facts it reports, with the call's values bound by name. */
function cancelSql(bind: Bind, kind: string) {
  const accountId = bind('accountId') as string;
  const lookup = kind === 'none' ? undefined : ({ [kind]: bind('lead') } as LeadLookup);
  const contactId = contactIdOfLookupSql(accountId, lookup);
  // Found by its key, then checked against the account: with `account_id = … and id = …` a
  // generic plan made while the table was young scanned every campaign of the account
  // (campaigns_account). LIMIT 1 keeps the subquery planned on its own (trigger-state.repo.ts).
  const campaign = sql`select id, schedule from (select id, account_id, schedule from campaigns
    where id = ${bind('campaignId')} and deleted_at is null limit 1) k where account_id = ${accountId}`;
  const cancel = sql<{ id: string }>`
    update sends set status = 'cancelled', updated_at = ${bind('now')}
     where account_id = ${accountId} and status = 'pending'
       and campaign_id = (select id from (${campaign}) live where schedule = 'api')
       and contact_id = ${contactId}
    returning id`;
  const facts = sql`(select schedule from (${campaign}) live) as schedule, ${contactId} as contact_id`;
  return { cancel, facts };
}
