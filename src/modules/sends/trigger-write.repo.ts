import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { onPostgres } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import { StaleRead } from '../../db/write-unit.js';
import {
  type ContactWriteExtras,
  type ContactWritePlan,
  contactWriteStatement,
  executeContactWrite,
} from '../contacts/contact-write-plan.js';
import { insertSend, type NewSend } from './sends.repo.js';
import type { TriggerGuard, TriggerPlan } from './trigger-plan.js';

/**
 * Applies a trigger's plan (trigger-plan.ts), or throws StaleRead when what the decision rested
 * on has changed since the read (inWriteUnit then runs the unit again from its read). What the
 * write does is defined here once, as SQL fragments both engines use: PostgreSQL runs them as
 * ONE statement (a data-modifying CTE, atomic on its own, no transaction), SQLite as a few
 * statements inside the unit's transaction, where the guards always hold.
 */
export async function applyTriggerPlan(q: Tx, engine: Engine, plan: TriggerPlan): Promise<void> {
  if (plan.kind === 'restart') return restartPendingSend(q, plan);
  if (engine === 'postgres') return insertGuardedOnPostgres(q, plan.send, plan.guard);
  return insertGuardedOnSqlite(q, plan.send, plan.guard);
}

async function restartPendingSend(q: Tx, plan: Extract<TriggerPlan, { kind: 'restart' }>): Promise<void> {
  // Still pending? Else a worker claimed it or it was cancelled: read again (re-entry may now reject).
  const row = await q
    .updateTable('sends')
    .set({ due_at: plan.dueAt, trigger_data: plan.triggerData, updated_at: plan.now })
    .where('account_id', '=', plan.accountId)
    .where('id', '=', plan.sendId)
    .where('status', '=', 'pending')
    .returning('id')
    .executeTakeFirst();
  if (!row) throw new StaleRead('pending send');
}

/**
 * The contact as read, or no row. PostgreSQL takes the row's lock (`for update` by the update,
 * `for share` by the check) and, when a concurrent write held it, re-checks the condition on
 * the newest version of the row: a lead write (which bumps the version and stamps updated_at),
 * an opt-out, an erase (no row) or another trigger's send all make it fail.
 */
function contactGuard(guard: TriggerGuard, engine: Engine): RawBuilder<{ id: string }> {
  const { accountId, contact } = guard;
  const matches = sql`account_id = ${accountId} and id = ${contact.id} and version = ${contact.version}
    and updated_at = ${contact.updatedAt} and opted_out = ${contact.optedOut ? 1 : 0}`;
  if (guard.contactWrite === 'bump') return sql`update contacts set version = version + 1 where ${matches} returning id`;
  return sql`select id from contacts where ${matches} ${engine === 'postgres' ? sql`for share` : sql``}`;
}

/**
 * Room left under the allowance, counting one more send: this month's count as read, plus the
 * counted sends recorded since (allowance_version moved by as many; cancellations since only
 * make the bound safer). Re-checked under the account row's lock, so two triggers near the
 * limit never both pass, and those far from it never conflict.
 */
function allowanceGuard(accountId: string, allowance: NonNullable<TriggerGuard['allowance']>, after: RawBuilder<unknown>) {
  return sql<{ id: string }>`update accounts set allowance_version = allowance_version + 1
    where id = ${accountId} and allowance is not null
      and cast(${allowance.counted} as bigint) + (allowance_version - cast(${allowance.version} as bigint)) < allowance
      ${after}
    returning id`;
}

const SEND_COLUMNS = [
  'id',
  'account_id',
  'campaign_id',
  'contact_id',
  'status',
  'channel',
  'due_at',
  'reason',
  'to_address',
  'created_at',
  'updated_at',
  'trigger_data',
  'attempts',
] as const;

/** A new send's row as SQL values, in SEND_COLUMNS' order (typed: they are selected, not inserted as values). */
function sendRowValues(send: NewSend): RawBuilder<unknown> {
  const text = (v: string | null | undefined) => sql`cast(${v ?? null} as text)`;
  const bigint = (v: number) => sql`cast(${v} as bigint)`;
  return sql.join([
    text(send.id),
    text(send.account_id),
    text(send.campaign_id),
    text(send.contact_id),
    text(send.status),
    text(send.channel),
    bigint(send.due_at),
    text(send.reason),
    text(send.to_address),
    bigint(send.created_at),
    bigint(send.created_at),
    text(send.trigger_data),
    sql`0`,
  ]);
}

const sendColumns = () => sql.join(SEND_COLUMNS.map((c) => sql.ref(c)));

async function insertGuardedOnPostgres(q: Tx, send: NewSend, guard: TriggerGuard): Promise<void> {
  // The account's lock comes after the contact's (`exists` runs the contact guard first), the
  // order lockContact then lockAccount kept before: no deadlock between two triggers.
  const room = guard.allowance
    ? sql`, room as (${allowanceGuard(guard.accountId, guard.allowance, sql`and exists (select 1 from guard)`)})`
    : sql``;
  const { rows } = await sql<{ id: string }>`
    with guard as (${contactGuard(guard, 'postgres')})${room},
    sent as (
      insert into sends (${sendColumns()})
      select ${sendRowValues(send)} from guard ${guard.allowance ? sql`cross join room` : sql``}
      returning id)
    select id from sent`.execute(q);
  if (rows.length === 0) throw new StaleRead(guard.allowance ? 'contact or allowance' : 'contact');
}

async function insertGuardedOnSqlite(q: Tx, send: NewSend, guard: TriggerGuard): Promise<void> {
  if ((await contactGuard(guard, 'sqlite').execute(q)).rows.length === 0) throw new StaleRead('contact');
  if (guard.allowance && (await allowanceGuard(guard.accountId, guard.allowance, sql``).execute(q)).rows.length === 0) {
    throw new StaleRead('allowance');
  }
  await insertSend(q, send);
}

/**
 * A trigger with a `lead` object (trigger-with-lead.ts): the contact's write (contact-write-plan.ts)
 * and the trigger's, so both commit or neither. Returns the KPI ids whose totals were written;
 * throws StaleRead when a guard failed (then nothing was written). The account has no
 * allowance (the caller takes the general path otherwise).
 */
export function applyTriggerWithContact(
  q: Tx,
  accountId: string,
  contactPlan: ContactWritePlan,
  plan: TriggerPlan,
  optedOut: boolean,
): Promise<string[]> {
  return onPostgres(q)
    ? withContactOnPostgres(q, accountId, contactPlan, plan, optedOut)
    : withContactOnSqlite(q, accountId, contactPlan, plan);
}

/**
 * PostgreSQL, ONE statement (issue 12), no transaction. The contact's guard carries the
 * trigger's too: the version the read saw and the opt-out flag the rules saw. A new send is
 * selected from the contact written. A Delay restart (the contact exists: it has a pending
 * send) first locks the contact's row as read (`lk`, FOR UPDATE, version and opt-out flag
 * re-checked on its newest version), then restarts the send only when it did, and the
 * contact's write requires the restart: rows are taken contact first, then send, the order of
 * every other write of a trigger (the retry's transaction locks the contact first too), so two
 * of them no longer deadlock; and a contact that moved on writes nothing, the send included.
 */
async function withContactOnPostgres(
  q: Tx,
  accountId: string,
  contactPlan: ContactWritePlan,
  plan: TriggerPlan,
  optedOut: boolean,
): Promise<string[]> {
  const optOutAsRead = sql`opted_out = ${optedOut ? 1 : 0}`;
  let extras: ContactWriteExtras;
  if (plan.kind === 'restart') {
    if (contactPlan.contact.kind !== 'update') throw new Error('a restart is of an existing contact');
    extras = {
      before: [
        sql`lk as (select id from contacts where account_id = ${accountId} and id = ${contactPlan.contactId}
            and version = ${contactPlan.contact.version} and ${optOutAsRead} for update)`,
        sql`r as (update sends set due_at = cast(${plan.dueAt} as bigint), trigger_data = cast(${plan.triggerData} as text),
            updated_at = cast(${plan.now} as bigint)
          where account_id = ${plan.accountId} and id = ${plan.sendId} and status = 'pending' and exists (select 1 from lk) returning id)`,
      ],
      requires: sql`exists (select 1 from r)`,
    };
  } else {
    extras = {
      requires: optOutAsRead,
      after: [sql`sent as (insert into sends (${sendColumns()}) select ${sendRowValues(plan.send)} from c returning id)`],
    };
  }
  const { rows } = await sql<{ kind: string; id: string }>`${contactWriteStatement(accountId, contactPlan, extras)}`.execute(q);
  if (!rows.some((r) => r.kind === 'contact')) throw new StaleRead(plan.kind === 'restart' ? 'contact or pending send' : 'contact');
  return rows.filter((r) => r.kind === 'kpi').map((r) => r.id);
}

/**
 * SQLite: the contact's statements (contact-write-plan.ts), then the send's, inside the unit's
 * transaction, where what the read saw still holds: the contact's version guard is kept (the
 * executor is shared), the trigger's contact guard is not run again (its version bump is the
 * contact write's own, as in the PostgreSQL statement).
 */
async function withContactOnSqlite(q: Tx, accountId: string, contactPlan: ContactWritePlan, plan: TriggerPlan): Promise<string[]> {
  const added = await executeContactWrite(q, accountId, contactPlan);
  if (plan.kind === 'restart') await restartPendingSend(q, plan);
  else await insertSend(q, plan.send);
  return added;
}
