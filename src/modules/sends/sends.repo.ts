import { type Expression, sql } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { constantStatement } from '../../db/constant-statements.js';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { Bool, SendStatus, SendsTable } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { utcDayOf } from '../../db/utc-day.js';

/** Statuses that mean the contact received (or is about to receive) the campaign. */
export const RECEIVED: SendStatus[] = ['queued', 'sending', 'sent'];
/** Statuses that count toward the monthly allowance (decisions.md, Plans). */
export const COUNTED: SendStatus[] = ['pending', 'queued', 'sending', 'sent', 'error'];

/**
 * The sends counted against the allowance, as SQL with the statuses written out: the predicate
 * of the partial index `sends_counted` (migration 0023), term for term, so that both engines
 * read that index (SQLite matches a partial index's terms as written; bound values would not
 * match them). Test sends from the admin panel never count.
 */
export const COUNTED_SENDS = sql<boolean>`status in (${sql.raw(COUNTED.map((status) => `'${status}'`).join(', '))}) and test = 0`;

/**
 * Locks the contact's row for the rest of the transaction on PostgreSQL and reads its opt-out
 * flag: that serialises triggers (and test sends) for one contact (SQLite transactions are
 * serial already), so the re-entry check and the insert that follow never interleave with
 * another's. Undefined when the contact is not the account's.
 */
export async function lockContact(
  db: Queryable,
  engine: Engine,
  accountId: string,
  contactId: string,
): Promise<{ optedOut: boolean } | undefined> {
  const tx = kyselyOf(db);
  const lock = engine === 'postgres' ? sql`for update` : sql``;
  const { rows } = await sql<{
    opted_out: number;
  }>`select opted_out from contacts where account_id = ${accountId} and id = ${contactId} ${lock}`.execute(tx);
  return rows[0] && { optedOut: Number(rows[0].opted_out) === 1 };
}

/** What a trigger decides on besides the opt-out, read in one statement. */
export interface RecipientState {
  /** The primary (first stored) address of each channel, or null. */
  email: string | null;
  phone: string | null;
  /** When the contact last received the campaign (lastReceipt), or undefined. */
  lastReceiptAt: number | undefined;
  /** The account's monthly allowance; null: unlimited. */
  allowance: number | null;
}

/**
 * Read in a statement of its own after lockContact (and after a Delay restart): under READ
 * COMMITTED a statement sees other transactions' writes as at its own start, so reading this
 * in the locking statement, or before the restart, could miss a write the trigger waited for
 * (an address being added, a pending send a worker just claimed).
 */
export async function recipientState(db: Queryable, accountId: string, contactId: string, campaignId: string): Promise<RecipientState> {
  const tx = kyselyOf(db);
  // Addresses by contact id alone (lockContact checked the account): the contact indexes serve it in order.
  const { rows } = await sql<{ email: string | null; phone: string | null; last_receipt: number | null; allowance: number | null }>`
    select (select email from contact_emails where contact_id = ${contactId} order by position limit 1) as email,
           (select phone from contact_phones where contact_id = ${contactId} order by position limit 1) as phone,
           (${lastReceiptQuery(tx, accountId, campaignId, contactId)}) as last_receipt,
           (select allowance from accounts where id = ${accountId}) as allowance`.execute(tx);
  const row = rows[0]!;
  return {
    email: row.email,
    phone: row.phone,
    lastReceiptAt: row.last_receipt === null ? undefined : Number(row.last_receipt),
    allowance: row.allowance === null ? null : Number(row.allowance),
  };
}

/**
 * When the contact last received the campaign (epoch ms), or undefined if never; `excludeSendId`
 * skips a send itself. A test send from the admin panel is not a receipt: it never blocks re-entry.
 */
export async function lastReceipt(db: Queryable, accountId: string, campaignId: string, contactId: string, excludeSendId?: string) {
  const tx = kyselyOf(db);
  const row = await lastReceiptQuery(tx, accountId, campaignId, contactId, excludeSendId).executeTakeFirst();
  return row?.at == null ? undefined : Number(row.at);
}

function lastReceiptQuery(tx: Tx, accountId: string, campaignId: string, contactId: string, excludeSendId?: string) {
  let query = tx
    .selectFrom('sends')
    .select(sql<number | null>`max(coalesce(sent_at, created_at))`.as('at'))
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .where('contact_id', '=', contactId)
    .where('status', 'in', RECEIVED)
    .where('test', '=', 0);
  if (excludeSendId !== undefined) query = query.where('id', '!=', excludeSendId);
  return query;
}

/**
 * The receipts (as lastReceipt counts them) of the given campaigns and contacts (lists or
 * subqueries), one row per receiving send: the due-time checks of a claimed batch
 * (dispatcher/due-checks.ts), which take the latest of each pair but the send they check, and
 * drop rows of another account than the pair's. `alsoIds`: sends that count whatever their
 * status in the statement's snapshot (PostgreSQL's claim statement reads the sends it claims
 * as they were before its own update, dispatch-claim.pg.ts).
 */
export function receiptsQuery(
  db: Queryable,
  campaignIds: Expression<string>,
  contactIds: Expression<string>,
  alsoIds?: Expression<string>,
) {
  return kyselyOf(db)
    .selectFrom('sends')
    .select(['id', 'account_id', 'campaign_id', 'contact_id', sql<number>`coalesce(sent_at, created_at)`.as('at')])
    .where('campaign_id', 'in', campaignIds)
    .where('contact_id', 'in', contactIds)
    .where((eb) => (alsoIds ? eb.or([eb('status', 'in', RECEIVED), eb('id', 'in', alsoIds)]) : eb('status', 'in', RECEIVED)))
    .where('test', '=', 0);
}

/** Sends counted against the monthly allowance since `since`; test sends from the admin panel never count. */
export async function countSendsSince(db: Queryable, accountId: string, since: number): Promise<number> {
  const tx = kyselyOf(db);
  const row = await tx
    .selectFrom('sends')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('created_at', '>=', since)
    .where(COUNTED_SENDS)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What a new send is made of; its delivery columns (lease, attempts, outcome times) start empty. */
export type NewSend = Pick<
  SendsTable,
  'id' | 'account_id' | 'campaign_id' | 'contact_id' | 'status' | 'channel' | 'due_at' | 'reason' | 'to_address' | 'created_at'
> & {
  /** Set only by the admin panel's test send; real sends leave it to its default (0). */
  test?: Bool;
  /** The trigger call's `data` as JSON text; absent or null: none. */
  trigger_data?: string | null;
  /** A test send's address other than the contact's (admin panel, "send a test to"); absent: none. */
  test_to?: string | null;
};

const INSERT_SEND = constantStatement(
  `insert into sends (id, account_id, campaign_id, contact_id, status, channel, due_at, wake_at, reason, to_address,
      created_at, updated_at, trigger_data, test, test_to, attempts)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
);

/**
 * One constant text (db/constant-statements.ts: no per-call build or compile, prepared once): a
 * query builder's per-call tree and compile cost a trigger's hot path more than SQLite takes to
 * run the insert (profile of the lead-object trigger, docs/performance.md).
 */
export async function insertSend(db: Queryable, send: NewSend): Promise<void> {
  await INSERT_SEND(kyselyOf(db), [
    send.id,
    send.account_id,
    send.campaign_id,
    send.contact_id,
    send.status,
    send.channel,
    send.due_at,
    send.due_at,
    send.reason,
    send.to_address,
    send.created_at,
    send.created_at,
    send.trigger_data ?? null,
    send.test ?? 0,
    send.test_to ?? null,
  ]);
}

/**
 * A campaign's real sends grouped by status, with how many were processed / delivered: its
 * statistics. Test sends from the admin panel are left out.
 */
export async function countCampaignSends(db: Queryable, accountId: string, campaignId: string) {
  const tx = kyselyOf(db);
  const rows = await tx
    .selectFrom('sends')
    .select([
      'status',
      sql<number>`count(*)`.as('count'),
      sql<number>`count(processed_at)`.as('processed'),
      sql<number>`count(delivered_at)`.as('delivered'),
      sql<number>`count(bounced_at)`.as('bounced'),
    ])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .where('test', '=', 0)
    .groupBy('status')
    .execute();
  // count() is a bigint on PostgreSQL: Number() keeps both engines alike.
  return rows.map((r) => ({
    status: r.status,
    count: Number(r.count),
    processed: Number(r.processed),
    delivered: Number(r.delivered),
    bounced: Number(r.bounced),
  }));
}

/**
 * A campaign's real sends per UTC day of `column`, since `since` (optionally of one status):
 * its daily statistics. Test sends from the admin panel are left out.
 */
export async function countCampaignSendsByDay(
  db: Queryable,
  accountId: string,
  campaignId: string,
  column: 'sent_at' | 'updated_at' | 'processed_at' | 'delivered_at' | 'bounced_at',
  since: number,
  status?: 'sent' | 'error',
): Promise<{ day: number; count: number }[]> {
  let query = kyselyOf(db)
    .selectFrom('sends')
    .select([utcDayOf(column).as('day'), sql<number>`count(*)`.as('count')])
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .where('test', '=', 0)
    .where(column, '>=', since);
  if (status !== undefined) query = query.where('status', '=', status);
  const rows = await query.groupBy(utcDayOf(column)).execute();
  return rows.map((r) => ({ day: Number(r.day), count: Number(r.count) }));
}

export interface QueueDepth {
  due: number;
  scheduled: number;
  in_flight: number;
}

/**
 * The sends queue's depth for /metrics: due (claimable now), scheduled (due later), in flight.
 * A scan of the queue's index (status, wake_at) over the unfinished statuses only, answered
 * from the index: finished rows, the bulk of the table, are never read. So "due" is by wake
 * time: a send a restart moved later counts as due from its old due time until a claim finds it
 * at the queue's front and re-arms it (dispatch.repo.ts, rearmWoken), which a dispatcher that
 * keeps up does as that time comes.
 */
export async function sendQueueDepth(db: Queryable, now: number): Promise<QueueDepth> {
  const row = await kyselyOf(db)
    .selectFrom('sends')
    .select((eb) => [
      eb.fn
        .sum<number>(
          eb
            .case()
            .when(eb.and([eb('status', 'in', ['pending', 'queued']), eb('wake_at', '<=', now)]))
            .then(1)
            .else(0)
            .end(),
        )
        .as('due'),
      eb.fn
        .sum<number>(
          eb
            .case()
            .when(eb.and([eb('status', 'in', ['pending', 'queued']), eb('wake_at', '>', now)]))
            .then(1)
            .else(0)
            .end(),
        )
        .as('scheduled'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'sending').then(1).else(0).end()).as('in_flight'),
    ])
    .where('status', 'in', ['pending', 'queued', 'sending'])
    .executeTakeFirst();
  return { due: Number(row?.due ?? 0), scheduled: Number(row?.scheduled ?? 0), in_flight: Number(row?.in_flight ?? 0) };
}
