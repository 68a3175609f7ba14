import { type Expression, type OperationNodeSource, type SelectQueryBuilder, SelectQueryNode, sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Bind } from '../db/constant-statements.js';
import type { Database } from '../db/schema.js';
import { campaignsWithWebhooksQuery, groupCampaignRows } from '../modules/campaigns/campaigns.repo.js';
import { campaignsFrom } from '../modules/campaigns/campaigns.service.js';
import { assembleContactProfiles, type ContactProfileRows, contactProfileQueries } from '../modules/contacts/contact-profile.js';
import { latestReceiptOf } from '../modules/sends/recipient-rules.js';
import { receiptsQuery } from '../modules/sends/sends.repo.js';
import { suppressedFrom } from '../modules/suppressions/suppressions.service.js';
import {
  CLAIMS,
  type ClaimedRow,
  type ClaimedSend,
  claimPicked,
  claimValues,
  lookAheadOfClaim,
  pickDue,
  queueFront,
  rearmWoken,
  toClaimedSend,
} from './dispatch.repo.js';
import type { DueData } from './due-checks.js';

/**
 * The PostgreSQL claim of a batch, with everything its due-time checks and its rendering read,
 * in ONE statement (one round trip instead of a claim transaction and a read transaction of a
 * dozen statements): the claim is a data-modifying CTE (beside another that re-arms the sends
 * at the queue's front that a restart moved later, dispatch.repo.ts queueFront and rearmWoken),
 * and the same statement reads, for the sends it claims, their campaigns, their contacts'
 * profiles (a query per table), their receipts and the suppressed addresses among theirs, each
 * as a JSON array of the rows the SQLite path reads with separate statements (due-checks.ts
 * readDueData), and the queue's look-ahead (lookAheadOfClaim). The rows are put
 * together by the same functions on both engines, and the rules that judge them are
 * verdictsOf's: only the reading differs.
 *
 * Snapshot: every part of the statement sees the database as it was when the statement
 * began, before its own update. The claimed sends are counted as receipts, as the SQLite
 * path, reading after the claim committed, sees them ('sending' is a receipt).
 */
export async function claimWithDueData(
  db: Db,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<{ sends: ClaimedSend[]; data: DueData; nextDueAt: number | null }> {
  const { rows } = await CLAIMS.run<ClaimRead>(db.kysely, 'claim with due data', claimValues(now, leaseMs, limit), (bind) =>
    claimStatement(db, bind),
  );
  const read = rows[0]!;
  const sends = (read.sends as ClaimedRow[]).map(toClaimedSend);
  const data: DueData = {
    campaigns: campaignsFrom(
      sends.map((s) => ({ accountId: s.account_id, campaignId: s.campaign_id })),
      groupCampaignRows(read.campaigns),
    ),
    contacts: assembleContactProfiles(
      sends.map((s) => ({ accountId: s.account_id, contactId: s.contact_id })),
      read as unknown as ContactProfileRows,
    ),
    lastReceiptAt: latestReceiptOf(read.receipts),
    suppressed: suppressedFrom(read.suppressed),
  };
  return { sends, data, nextDueAt: read.next_due === null ? null : Number(read.next_due) };
}

type ClaimRead = Record<'sends' | 'campaigns' | 'receipts' | 'suppressed' | keyof ContactProfileRows, never[]> & {
  next_due: number | string | null;
};

/** The statement: built once per process (CLAIMS), its values bound as parameters. */
function claimStatement(db: Db, bind: Bind) {
  const k = db.kysely;
  const claimedContacts = sql<string>`(select contact_id from claimed)`;
  const profiles = contactProfileQueries(k, claimedContacts);
  const campaigns = campaignsWithWebhooksQuery(k, sql<string>`(select campaign_id from claimed)`);
  // The re-entry rule's receipts: the claimed sends count as ones (see above), test sends do not.
  const receipts = receiptsQuery(
    k,
    sql<string>`(select campaign_id from claimed where test = 0)`,
    sql<string>`(select contact_id from claimed where test = 0)`,
    sql<string>`(select id from claimed)`,
  );
  // Every address a send could go to (its test address, the contact's emails and phones): the
  // rule that picks one is recipientAddress's, in TypeScript; this only reads which are suppressed.
  const suppressed = sql`(select distinct s.account_id, s.channel, s.address from claimed c
     cross join lateral (
       select c.test_to as address
       union all select e.email from contact_emails e where e.contact_id = c.contact_id and e.account_id = c.account_id
       union all select p.phone from contact_phones p where p.contact_id = c.contact_id and p.account_id = c.account_id) a
     join suppressed_addresses s on s.account_id = c.account_id and s.channel = c.channel and s.address = a.address)`;
  return sql<ClaimRead>`
    with ${queueFront(db, bind)}, rearmed as (${rearmWoken(bind)}), ${pickDue(db, bind)}, claimed as (${claimPicked(bind)})
    select (select coalesce(json_agg(c order by c.due_at), '[]'::json) from claimed c) as sends,
           ${rowsOf(campaigns)} as campaigns,
           ${rowsOf(profiles.rows)} as rows,
           ${rowsOf(profiles.emails)} as emails,
           ${rowsOf(profiles.phones)} as phones,
           ${rowsOf(profiles.tags)} as tags,
           ${rowsOf(profiles.fieldRows)} as "fieldRows",
           ${rowsOf(profiles.kpiRows)} as "kpiRows",
           ${rowsOf(profiles.noteRows)} as "noteRows",
           ${rowsOf(profiles.trackers)} as trackers,
           ${rowsOf(receipts)} as receipts,
           ${rowsOf(suppressed)} as suppressed,
           ${lookAheadOfClaim(bind)} as next_due`;
}

/** A listing: a SELECT whose ORDER BY can be taken off and a column added. */
type Listing = SelectQueryBuilder<Database, keyof Database, object>;

/** The position of a row in its list: added to a listing's rows, then dropped from the JSON. */
const ROW_NUMBER = 'herald_row';

/**
 * A read's rows as one JSON array. A listing with an ORDER BY (emails by position, fields by
 * name ...) keeps that order for certain: `json_agg(... order by ...)`, not an aggregate over a
 * sorted subquery (whose order PostgreSQL does not promise to keep). The listing's own ORDER BY
 * becomes a row number computed inside it (its sort keys need not be among its columns), and
 * the aggregate orders by that number. Reads without an order (their rows are looked up by key)
 * are aggregated as they come.
 */
function rowsOf(query: Listing | Expression<unknown>) {
  const node = query.toOperationNode();
  const orderBy = SelectQueryNode.is(node) ? node.orderBy : undefined;
  if (!orderBy || !('clearOrderBy' in query)) return sql`(select coalesce(json_agg(j), '[]'::json) from (${query}) j)`;
  const order: OperationNodeSource = { toOperationNode: () => orderBy };
  const numbered = query.clearOrderBy().select(sql<number>`row_number() over (${order})`.as(ROW_NUMBER));
  return sql`(select coalesce(json_agg(to_jsonb(j) - ${ROW_NUMBER} order by j.${sql.ref(ROW_NUMBER)}), '[]'::json) from (${numbered}) j)`;
}
