import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { SendsTable } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';

export type ClaimedSend = Pick<SendsTable, 'id' | 'account_id' | 'campaign_id' | 'contact_id' | 'channel' | 'attempts' | 'due_at'>;

/**
 * Claims due sends with one conditional UPDATE ... RETURNING: pending and queued sends whose
 * time has come, and sends whose worker's lease ran out (it died mid-send). On PostgreSQL the
 * pick skips rows another worker is claiming, so any number of workers share the queue. The
 * pick is a MATERIALIZED CTE so it runs exactly once (see webhooks/deliveries.repo.ts: as an
 * `IN (subquery)` PostgreSQL may re-run it per row and, skipping its own updates, claim more
 * than `limit`). `attempts` is bumped here: it fences the outcome write of a worker whose
 * lease was taken over.
 */
export async function claimDueSends(db: Db, now: number, leaseMs: number, limit: number): Promise<ClaimedSend[]> {
  const skipLocked = db.engine === 'postgres' ? sql`for update skip locked` : sql``;
  const due = sql`((status in ('pending', 'queued') and due_at <= ${now}) or (status = 'sending' and lease_until <= ${now}))`;
  // In a transaction of its own so that, on SQLite, the claim shares its commit (an fsync)
  // with the outcomes being recorded at the same moment (group commit, db/transaction.ts).
  const result = await inTransaction(db, (tx) =>
    sql<ClaimedSend>`
    with picked as materialized (select id from sends where ${due} order by due_at limit ${limit} ${skipLocked})
    update sends
       set status = 'sending', lease_until = ${now + leaseMs}, attempts = attempts + 1, updated_at = ${now}
     where id in (select id from picked)
       and ${due}
    returning id, account_id, campaign_id, contact_id, channel, attempts, due_at`.execute(tx),
  );
  return result.rows.map((r) => ({ ...r, attempts: Number(r.attempts), due_at: Number(r.due_at) }));
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
