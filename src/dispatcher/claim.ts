import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/connect.js';
import type { SendsTable } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';

export type ClaimedSend = Pick<SendsTable, 'id' | 'account_id' | 'campaign_id' | 'contact_id' | 'channel' | 'attempts' | 'due_at'> & {
  /** An admin panel test send (the dispatcher skips the trigger rules and webhooks for it). */
  test: boolean;
};

/**
 * Claims due sends with one UPDATE ... RETURNING: pending and queued sends whose time has
 * come, and sends whose worker's lease ran out (it died mid-send). `attempts` is bumped here:
 * it fences the outcome write of a worker whose lease was taken over.
 *
 * The pick reads each of the three kinds from the sends_due index (status, due_at) in due
 * order, at most `limit` of each, and keeps the `limit` earliest: a backlog of any size costs
 * the same as an empty queue (an OR of the three would sort every due send on each claim).
 * It is a MATERIALIZED CTE so it runs exactly once: as an `IN (subquery)` PostgreSQL may re-run
 * it per row and, skipping its own updates, claim more than `limit`. On PostgreSQL each branch
 * locks its rows with SKIP LOCKED, so any number of workers share the queue and a picked row
 * cannot change before the update; on SQLite the statement is atomic (one writer).
 */
export async function claimDueSends(db: Db, now: number, leaseMs: number, limit: number): Promise<ClaimedSend[]> {
  const lock = db.engine === 'postgres' ? sql`for update skip locked` : sql``;
  const kind = (name: string, due: RawBuilder<unknown>) =>
    sql`select * from (select id, due_at from sends where ${due} order by due_at limit ${limit} ${lock}) ${sql.raw(name)}`;
  // In a transaction of its own so that, on SQLite, the claim shares its commit (an fsync)
  // with the outcomes being recorded at the same moment (group commit, db/transaction.ts).
  const result = await inTransaction(db, (tx) =>
    sql<Omit<ClaimedSend, 'test'> & { test: number }>`
    with picked as materialized (
      select id from (
        ${kind('queued', sql`status = 'queued' and due_at <= ${now}`)}
        union all ${kind('pending', sql`status = 'pending' and due_at <= ${now}`)}
        union all ${kind('expired', sql`status = 'sending' and lease_until <= ${now}`)}
      ) due order by due_at limit ${limit})
    update sends
       set status = 'sending', lease_until = ${now + leaseMs}, attempts = attempts + 1, updated_at = ${now}
     where id in (select id from picked)
    returning id, account_id, campaign_id, contact_id, channel, attempts, due_at, test`.execute(tx),
  );
  return result.rows.map((r) => ({ ...r, attempts: Number(r.attempts), due_at: Number(r.due_at), test: Number(r.test) === 1 }));
}

/** The earliest moment something becomes claimable (a due send, or a lease running out). */
export async function nextDueAt(db: Db): Promise<number | undefined> {
  const [pending, queued, leased] = await Promise.all([
    db.kysely.selectFrom('sends').select((eb) => eb.fn.min('due_at').as('at')).where('status', '=', 'pending').executeTakeFirst(),
    db.kysely.selectFrom('sends').select((eb) => eb.fn.min('due_at').as('at')).where('status', '=', 'queued').executeTakeFirst(),
    db.kysely.selectFrom('sends').select((eb) => eb.fn.min('lease_until').as('at')).where('status', '=', 'sending').executeTakeFirst(),
  ]);
  const times = [pending?.at, queued?.at, leased?.at].filter((t) => t !== null && t !== undefined).map(Number);
  return times.length ? Math.min(...times) : undefined;
}
