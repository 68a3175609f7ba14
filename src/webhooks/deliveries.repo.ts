import { type Insertable, type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { writeLater } from '../db/pg-transaction.js';
import { kyselyOf, type Queryable } from '../db/queryable.js';
import type { WebhookDeliveriesTable } from '../db/schema.js';
import { skipLocked } from '../db/skip-locked.js';
import { inStatement, inTransaction, type Tx } from '../db/transaction.js';
import { newId } from '../ids.js';

export type ClaimedDelivery = Pick<WebhookDeliveriesTable, 'id' | 'account_id' | 'campaign_id' | 'url' | 'payload' | 'attempts'>;

/**
 * Claims up to `limit` due deliveries for this worker with one conditional UPDATE ...
 * RETURNING: pending rows whose time has come, and rows whose lease ran out (their worker
 * died). Each kind is read from the webhook_deliveries_due index (status, next_attempt_at, id)
 * in claim order, at most `limit` of each, and the `limit` first of the two are kept: a backlog
 * of any size costs a claim the same (an OR of the two sorted every due row on each claim,
 * migration 0025). Ties on the due time go in creation order (ids are monotonic), so a send's
 * URLs are tried in the order the campaign lists them.
 * The rows are picked in a MATERIALIZED CTE so the pick runs exactly once: as an
 * `IN (subquery)`, PostgreSQL may plan a semi-join that re-runs the subquery per row, and
 * with SKIP LOCKED each re-run skips the rows just updated and picks new ones, claiming far
 * more than `limit`. On PostgreSQL the pick locks its rows with SKIP LOCKED, so workers on
 * other machines take other rows instead of waiting, and a row picked cannot change before
 * the update (the lock is taken on its newest version, the due condition checked on it). The
 * update names the picked ids only: a due condition repeated there let the planner read the
 * whole due range of the index to join it. SQLite has one writer, so the statement alone is
 * atomic. `attempts` goes up at the claim and fences the outcome write.
 */
export async function claimDue(db: Db, now: number, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
  const pending = sql`status = 'pending' and next_attempt_at <= ${now}`;
  const expired = sql`status = 'delivering' and lease_until < ${now}`;
  const kind = (name: string, due: RawBuilder<unknown>) =>
    sql`select * from (select id, next_attempt_at from webhook_deliveries where ${due}
        order by next_attempt_at, id limit ${limit} ${skipLocked(db)}) ${sql.raw(name)}`;
  // A queue's own bookkeeping, as the sends queue's claims (dispatcher/dispatch.repo.ts QUEUE_WRITE):
  // a claim a power cut rolls back leaves the delivery claimable again (at least once).
  return inStatement(
    db,
    async (q) => {
      const { rows } = await sql<ClaimedDelivery>`with picked as materialized (
          select id from (${kind('pending', pending)} union all ${kind('expired', expired)}) due
          order by next_attempt_at, id limit ${limit})
        update webhook_deliveries
           set status = 'delivering', lease_until = ${now + leaseMs}, attempts = attempts + 1, updated_at = ${now}
         where id in (select id from picked)
        returning id, account_id, campaign_id, url, payload, attempts`.execute(q);
      return rows;
    },
    'wal',
  );
}

export interface AttemptRecord {
  attemptedAt: number;
  finishedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

export type AttemptResult = 'delivered' | 'retry' | 'failed' | 'stale';

/**
 * Logs the attempt and moves the delivery on, in one transaction. The state change is fenced on
 * (status delivering, attempts as claimed): if the lease ran out and another worker claimed
 * the row meanwhile, this worker's outcome is logged but decides nothing ('stale'). After a
 * failure, `retryAt` (the caller's schedule) gives the next attempt's time from the first
 * attempt's, or null when the delivery has failed for good.
 */
export async function recordAttempt(
  db: Db,
  delivery: ClaimedDelivery,
  attempt: AttemptRecord,
  retryAt: (firstAttemptAt: number) => number | null,
): Promise<AttemptResult> {
  const delivered = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
  return inTransaction(db, async (tx) => {
    await tx
      .insertInto('webhook_attempts')
      .values({
        id: newId('wha'),
        account_id: delivery.account_id,
        delivery_id: delivery.id,
        attempted_at: attempt.attemptedAt,
        duration_ms: attempt.durationMs,
        status_code: attempt.statusCode,
        error: attempt.error,
      })
      .execute();

    let next: number | null = null;
    if (!delivered) {
      // The 24-hour window runs from the first attempt actually made (the worker may have been down at enqueue time).
      const first = await tx
        .selectFrom('webhook_attempts')
        .select(sql<number | null>`min(attempted_at)`.as('at'))
        .where('delivery_id', '=', delivery.id)
        .executeTakeFirstOrThrow();
      next = retryAt(Number(first.at ?? attempt.attemptedAt));
    }
    const result: AttemptResult = delivered ? 'delivered' : next === null ? 'failed' : 'retry';
    const updated = await tx
      .updateTable('webhook_deliveries')
      .set({
        status: result === 'retry' ? 'pending' : result,
        ...(next !== null ? { next_attempt_at: next } : {}),
        lease_until: null,
        last_status_code: attempt.statusCode,
        last_error: attempt.error,
        updated_at: attempt.finishedAt,
      })
      .where('id', '=', delivery.id)
      .where('status', '=', 'delivering')
      .where('attempts', '=', delivery.attempts)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1 ? result : 'stale';
  });
}

/** The earliest time something may become claimable: a pending row's due time or a running lease's end. */
export async function nextWakeAt(db: Queryable): Promise<number | null> {
  // Two index-friendly MINs rather than one CASE over every open row.
  const pending = await kyselyOf(db)
    .selectFrom('webhook_deliveries')
    .select(sql<number | null>`min(next_attempt_at)`.as('at'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  const leased = await kyselyOf(db)
    .selectFrom('webhook_deliveries')
    .select(sql<number | null>`min(lease_until)`.as('at'))
    .where('status', '=', 'delivering')
    .executeTakeFirstOrThrow();
  const times = [pending.at, leased.at].filter((t): t is number => t !== null).map(Number);
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * Inserts queued deliveries; a row whose (send_id, position) exists already is skipped rather
 * than failing, so a second call cannot abort the caller's transaction.
 */
export async function insertDeliveries(tx: Tx, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  if (rows.length === 0) return;
  // Nothing waits on its answer: on PostgreSQL it goes with the transaction's next statement or
  // its COMMIT (db/pg-transaction.ts), which it fails if it fails.
  await writeLater(
    tx,
    tx
      .insertInto('webhook_deliveries')
      .values(rows)
      .onConflict((oc) => oc.columns(['send_id', 'position']).doNothing()),
  );
}

/**
 * The webhook backlog for /metrics: due, scheduled (next attempt later), in flight. A range
 * scan of the webhook_deliveries_due index over the unfinished statuses only.
 */
export async function deliveryBacklog(db: Queryable, now: number): Promise<{ due: number; scheduled: number; in_flight: number }> {
  const row = await kyselyOf(db)
    .selectFrom('webhook_deliveries')
    .select((eb) => [
      eb.fn
        .sum<number>(
          eb
            .case()
            .when(eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now)]))
            .then(1)
            .else(0)
            .end(),
        )
        .as('due'),
      eb.fn
        .sum<number>(
          eb
            .case()
            .when(eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '>', now)]))
            .then(1)
            .else(0)
            .end(),
        )
        .as('scheduled'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'delivering').then(1).else(0).end()).as('in_flight'),
    ])
    .where('status', 'in', ['pending', 'delivering'])
    .executeTakeFirst();
  return { due: Number(row?.due ?? 0), scheduled: Number(row?.scheduled ?? 0), in_flight: Number(row?.in_flight ?? 0) };
}
