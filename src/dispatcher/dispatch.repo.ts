import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { type Bind, StatementShapes } from '../db/constant-statements.js';
import { kyselyOf, type Queryable } from '../db/queryable.js';
import type { SendStatus, SendsTable } from '../db/schema.js';
import { skipLocked } from '../db/skip-locked.js';
import { type Durability, inPriorityStatement, inStatement, type Tx } from '../db/transaction.js';
import { parseStoredJson } from '../json-limits.js';

/**
 * The sends queue's SQL: claims, leases and the fenced outcome writes of the dispatcher, and
 * the queue's depth for /metrics. The queue spans every account (a worker serves them all).
 */

export type ClaimedSend = Pick<SendsTable, 'id' | 'account_id' | 'campaign_id' | 'contact_id' | 'channel' | 'attempts' | 'due_at'> & {
  /** An admin panel test send (the dispatcher skips the trigger rules and webhooks for it). */
  test: boolean;
  /** The trigger call's `data` (read with the claim: it is what the message renders), or null. */
  triggerData: Record<string, unknown> | null;
  /** A test send's address chosen in the admin panel, instead of the contact's; null otherwise. */
  testTo?: string | null;
};

/**
 * The durability of the queue's own writes on SQLite (claims, outcomes, leases, sends ended at
 * their due time): committed to the WAL, not waiting for a sync of their own (db/transaction.ts).
 * A process crash keeps them; a power cut may roll the last of them back, which leaves a send
 * claimable again: at worst a message goes out twice, none is lost (docs/decisions.md).
 */
export const QUEUE_WRITE: Durability = 'wal';

/** One of the queue's own writes, alone: one statement on PostgreSQL, a QUEUE_WRITE in SQLite's commit queue. */
function queueStatement<T>(db: Db, statement: (q: Tx) => Promise<T>): Promise<T> {
  return inStatement(db, statement, QUEUE_WRITE);
}

/**
 * Claims due sends with one UPDATE ... RETURNING: pending and queued sends whose time has
 * come, and sends whose worker's lease ran out (it died mid-send). `attempts` is bumped here:
 * it fences the outcome write of a worker whose lease was taken over.
 *
 * A claim looks at the front of the queue and no further (queueFront): per waiting status the
 * `limit` sends that wake first, read from the sends_wake index (status, wake_at). It re-arms
 * those of them a restart moved later (rearmWoken) and claims the `limit` earliest due among
 * the others and the expired leases (pickDue): a backlog of any size, due or woken, costs a
 * claim the same as an empty queue. A claim whose front was all re-armed claims fewer than
 * its limit; the next one finds the sends behind them.
 * The front and the pick are MATERIALIZED CTEs so each runs exactly once: as an `IN
 * (subquery)` PostgreSQL may re-run it per row and, skipping its own updates, claim more than
 * `limit`. On PostgreSQL the front and the expired leases are locked with SKIP LOCKED, so any
 * number of workers share the queue and a row looked at cannot change before the updates; on
 * SQLite each statement is atomic (one writer).
 * Run on `q`, the claim's transaction on SQLite (dispatch-claim.ts): the re-arm, then the claim
 * on the front that is left. PostgreSQL's claim puts the same parts in its one statement
 * (dispatch-claim.pg.ts).
 */
export async function claimIn(q: Tx, db: Db, now: number, leaseMs: number, limit: number): Promise<ClaimedSend[]> {
  const values = claimValues(now, leaseMs, limit);
  await CLAIMS.run(q, 'rearm', values, (bind) => sql`with ${queueFront(db, bind)} ${rearmWoken(bind)}`);
  const result = await CLAIMS.run<ClaimedRow>(
    q,
    'claim',
    values,
    (bind) => sql`with ${queueFront(db, bind)}, ${pickDue(db, bind)} ${claimPicked(bind)}`,
  );
  return result.rows.map(toClaimedSend);
}

/** The claim's statements, built and compiled once per engine (db/constant-statements.ts): the values are parameters. */
export const CLAIMS = new StatementShapes();

/** The values a claim's parts bind (queueFront, rearmWoken, pickDue, claimPicked). */
export const claimValues = (now: number, leaseMs: number, limit: number) => ({ now, leaseUntil: now + leaseMs, limit });

/**
 * The `front` CTE of a claim (values: claimValues): per waiting status, the `limit` sends awake
 * (`wake_at` has come) that wake first, with their due time. A waiting send's `wake_at` is never
 * after its `due_at` (schema.ts), so every due send is awake; the front's sends not yet due are
 * the ones a restart moved later.
 */
export function queueFront(db: Db, bind: Bind) {
  const awake = (status: SendStatus) =>
    sql`select * from (select id, due_at from sends where status = ${sql.lit(status)} and wake_at <= ${bind('now')}
        order by wake_at limit ${bind('limit')} ${skipLocked(db)}) ${sql.raw(status)}`;
  return sql`front as materialized (${awake('queued')} union all ${awake('pending')})`;
}

/**
 * The front's sends not yet due sleep again until their `due_at` (values: claimValues): a send
 * is re-armed once per wake time a restart outlived, not once per restart. Needs queueFront.
 */
export function rearmWoken(bind: Bind) {
  return sql`update sends set wake_at = due_at where id in (select id from front where due_at > ${bind('now')})`;
}

/**
 * The `picked` CTE of a claim: the ids of up to `limit` claimable sends, earliest due first: the
 * front's due sends and the sends whose lease ran out (values: claimValues). Needs queueFront.
 */
export function pickDue(db: Db, bind: Bind) {
  const expired = sql`select * from (select id, due_at from sends where status = 'sending' and lease_until <= ${bind('now')}
      order by wake_at limit ${bind('limit')} ${skipLocked(db)}) expired`;
  return sql`picked as materialized (
      select id from (
        select id, due_at from front where due_at <= ${bind('now')}
        union all ${expired}
      ) due order by due_at limit ${bind('limit')})`;
}

/** The claim of the picked sends: leased, attempt bumped, returning what the dispatcher needs of each (values: claimValues). */
export function claimPicked(bind: Bind) {
  return sql`update sends
       set status = 'sending', lease_until = ${bind('leaseUntil')}, attempts = attempts + 1, updated_at = ${bind('now')}
     where id in (select id from picked)
    returning id, account_id, campaign_id, contact_id, channel, attempts, due_at, test, trigger_data, test_to`;
}

/** A claimed row as the database returns it (numbers may come as strings, JSON as text). */
export type ClaimedRow = Omit<ClaimedSend, 'test' | 'triggerData' | 'testTo'> & {
  test: number;
  trigger_data: string | null;
  test_to: string | null;
};

export function toClaimedSend({ trigger_data, test_to, ...r }: ClaimedRow): ClaimedSend {
  return {
    ...r,
    testTo: test_to ?? null,
    attempts: Number(r.attempts),
    due_at: Number(r.due_at),
    test: Number(r.test) === 1,
    triggerData: trigger_data === null ? null : parseStoredJson<Record<string, unknown>>(trigger_data),
  };
}

/** The earliest moment something becomes claimable (a due send, or a lease running out). */
export async function nextDueAt(db: Queryable): Promise<number | undefined> {
  // One statement (one round trip) for the three kinds, each its own indexed min(). A waiting
  // send may wake before it is due: the claim then re-arms it (rearmWoken).
  const { rows } = await sql<{ pending: number | null; queued: number | null; leased: number | null }>`select
      (select min(wake_at) from sends where status = 'pending') as pending,
      (select min(wake_at) from sends where status = 'queued') as queued,
      (select min(lease_until) from sends where status = 'sending') as leased`.execute(kyselyOf(db));
  const row = rows[0];
  const times = [row?.pending, row?.queued, row?.leased].filter((t) => t !== null && t !== undefined).map(Number);
  return times.length ? Math.min(...times) : undefined;
}

/**
 * nextDueAt as it will be once a PostgreSQL claim (queueFront, rearmWoken, pickDue, claimPicked;
 * values: claimValues) has committed, read by the claim's own statement: one round trip for a
 * claim that comes back short, instead of two. The statement sees the queue as it was when it
 * began, before its own updates, so the parts it changes are read as they will be:
 * - the front's sends it does not claim: due ones are claimable now; the ones it re-arms wake
 *   at their due time;
 * - the waiting sends behind the front: their wake time, as nextDueAt reads it;
 * - the leases: those of other workers' sends, and this claim's own (leaseUntil).
 * Sends queued after the statement began are not seen: the process that queues one wakes the
 * workers (notify) once it has committed, as it must anyway for a worker asleep.
 */
export function lookAheadOfClaim(bind: Bind) {
  const now = bind('now');
  const waiting = (status: SendStatus) =>
    sql`(select min(wake_at) from sends where status = ${sql.lit(status)} and id not in (select id from front))`;
  return sql<number | string | null>`least(
      (select min(greatest(due_at, ${now})) from front where id not in (select id from picked)),
      ${waiting('queued')}, ${waiting('pending')},
      (select min(lease_until) from sends where status = 'sending' and id not in (select id from picked)),
      (select ${bind('leaseUntil')}::bigint from picked limit 1))`;
}

/**
 * Extends the leases of sends still ours to `until`, in one fenced statement on the priority
 * connections (API load cannot hold a renewal up); answers the ids renewed. Fenced like an
 * outcome (status sending, the attempt we claimed); grouped by attempt number, as an OR per
 * send would nest too deep for SQLite with many sends in flight.
 */
export async function renewSendLeases(db: Db, leases: { id: string; attempts: number }[], until: number): Promise<string[]> {
  const byAttempts = new Map<number, string[]>();
  for (const { id, attempts } of leases) byAttempts.set(attempts, [...(byAttempts.get(attempts) ?? []), id]);
  const renewed = await inPriorityStatement(
    db,
    (tx) =>
      tx
        .updateTable('sends')
        .set({ lease_until: until })
        .where('status', '=', 'sending')
        .where((eb) => eb.or([...byAttempts].map(([attempts, ids]) => eb.and([eb('attempts', '=', attempts), eb('id', 'in', ids)]))))
        .returning('id')
        .execute(),
    QUEUE_WRITE,
  );
  return renewed.map((row) => row.id);
}

/**
 * Every outcome write is conditional on the claim still being ours (`status = 'sending'` and
 * the attempt number we claimed): a worker whose lease ran out and was taken over cannot
 * overwrite the newer attempt's result.
 */
function fenced(tx: Tx, send: ClaimedSend) {
  return tx.updateTable('sends').where('id', '=', send.id).where('status', '=', 'sending').where('attempts', '=', send.attempts);
}

/** Ends a claimed send without delivering it (an error after its delivery failed for good). */
export async function finishUndelivered(db: Db, send: ClaimedSend, status: UndeliveredStatus, reason: string | null, now: number) {
  await queueStatement(db, (q) => fenced(q, send).set({ status, reason, lease_until: null, updated_at: now }).execute());
}

export type UndeliveredStatus = Extract<SendStatus, 'optout' | 'rejected' | 'error'>;

/**
 * Ends the sends of a batch that its due-time checks stopped, in one fenced statement (an
 * UPDATE ... FROM a list of values, like markSentMany): one round trip on PostgreSQL, on its own
 * (autocommit); one savepoint in the commit queue on SQLite.
 */
export async function finishUndeliveredMany(
  db: Db,
  ended: { send: ClaimedSend; status: UndeliveredStatus; reason: string | null }[],
  now: number,
): Promise<void> {
  if (ended.length === 0) return;
  const rows = padded(ended.map(({ send, status, reason }) => [send.id, send.attempts, status, reason]));
  await queueStatement(db, (q) =>
    OUTCOME_WRITES.run(
      q,
      `ended ${rows.length}`,
      { rows, now },
      (bind) =>
        sql`update sends
         set status = v.column3, reason = v.column4, lease_until = null, updated_at = ${bind('now')}
        from (values ${valueRows(bind, rows.length, ['text', 'integer', 'text', 'text'])}) as v
       where sends.id = v.column1 and sends.status = 'sending' and sends.attempts = v.column2`,
    ),
  );
}

/** A bounce: the send ends in error, with the refused address and when it bounced. False when the claim was no longer ours. */
export async function markBounced(tx: Queryable, send: ClaimedSend, reason: string, to: string, now: number): Promise<boolean> {
  const updated = await fenced(kyselyOf(tx), send)
    .set({ status: 'error', reason, to_address: to, bounced_at: now, lease_until: null, updated_at: now })
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

export interface Delivered {
  to: string;
  providerMessageId: string | null;
  delivered: boolean;
}

/**
 * Marks many delivered sends sent in one fenced statement (outcome-batch.ts runs it as a priority
 * statement): an UPDATE ... FROM a list of values, each row fenced by its own
 * attempt number. Answers the ids recorded (the others' claims were taken over).
 */
export async function markSentMany(tx: Tx, outcomes: { send: ClaimedSend; result: Delivered; now: number }[]): Promise<Set<string>> {
  const rows = padded(
    outcomes.map(({ send, result, now }) => [
      send.id,
      send.attempts,
      result.to,
      result.providerMessageId,
      result.delivered ? now : null,
      now,
    ]),
  );
  const updated = await OUTCOME_WRITES.run<{ id: string }>(
    tx,
    `sent ${rows.length}`,
    { rows },
    (bind) =>
      sql`update sends
         set status = 'sent', to_address = v.column3, provider_message_id = v.column4, processed_at = v.column6,
             delivered_at = v.column5, sent_at = v.column6, reason = null, lease_until = null, updated_at = v.column6
        from (values ${valueRows(bind, rows.length, ['text', 'integer', 'text', 'text', 'bigint', 'bigint'])}) as v
       where sends.id = v.column1 and sends.status = 'sending' and sends.attempts = v.column2
      returning id`,
  );
  return new Set(updated.rows.map((row) => row.id));
}

/**
 * The outcome writes' statements, one text per engine and number of rows (db/constant-statements.ts).
 * The rows are padded with nulls up to the next power of two (a null id matches no send), so a
 * few texts serve groups of any size: compiled once each, and on PostgreSQL a handful of prepared
 * statements rather than one per group size.
 */
const OUTCOME_WRITES = new StatementShapes();

/** The number of rows a statement for `n` outcomes has: the next power of two. */
const rowsFor = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(n, 1)));

/** The rows, with rows of nulls up to rowsFor(rows.length). */
function padded(rows: unknown[][]): unknown[][] {
  const width = rows[0]!.length;
  const size = rowsFor(rows.length);
  return rows.length === size ? rows : [...rows, ...Array.from({ length: size - rows.length }, () => Array(width).fill(null))];
}

/**
 * `(values ...)` rows of the call's `rows` (each a list of the columns' values), typed: PostgreSQL
 * takes an untyped parameter in VALUES for text. The columns of a VALUES list are column1, column2
 * ... on both engines. `bind` is the shape's: the text is built once per row count.
 */
function valueRows(bind: Bind, rowCount: number, types: readonly string[]) {
  const row = (i: number) => sql`(${sql.join(types.map((type, j) => sql`cast(${bind(`rows.${i}`, j)} as ${sql.raw(type)})`))})`;
  return sql.join(Array.from({ length: rowCount }, (_, i) => row(i)));
}

/** A temporary failure: back to the queue, due again at `dueAt`. */
export async function requeue(db: Db, send: ClaimedSend, reason: string, dueAt: number, now: number) {
  await queueStatement(db, (q) =>
    fenced(q, send).set({ status: 'queued', reason, due_at: dueAt, wake_at: dueAt, lease_until: null, updated_at: now }).execute(),
  );
}
