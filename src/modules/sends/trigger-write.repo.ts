import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { type Bind, bindIn, constantStatement, onPostgres, StatementShapes } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import { StaleRead } from '../../db/write-unit.js';
import {
  type ContactWriteExtras,
  type ContactWritePlan,
  contactWriteShapeKey,
  contactWriteShapeOf,
  contactWriteStatement,
  contactWriteValues,
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

/**
 * The send of key `id`, as the condition of an update on PostgreSQL: found by its key in a
 * subquery of its own, then updated by its row address. With `id = … and status = 'pending'` in
 * the update itself, a generic plan made while the table was young (no statistics yet) scanned the
 * whole pending-sends index. A row updated meanwhile is re-checked on its newest version against
 * the update's other conditions (still pending), as before.
 */
export const sendRowOfKey = (id: unknown): RawBuilder<boolean> => sql<boolean>`ctid = (select ctid from sends where id = ${id} limit 1)`;

/**
 * What a Delay restart sets on PostgreSQL, bound from the call's group `restart`: the new due
 * time, the call's data, and `wake_at` (when the dispatcher looks at the send again) only when
 * the send is now due before it. A restart to a later time then changes no indexed value, so
 * PostgreSQL updates the row in place of its indexes (a HOT update) instead of writing an entry
 * in each of them; a claim re-arms a send it finds at the queue's front awake but not yet due
 * (dispatch.repo.ts, rearmWoken).
 */
export function restartAssignmentsOf(bind: Bind): RawBuilder<unknown> {
  const dueAt = sql`cast(${bind('restart.dueAt')} as bigint)`;
  return sql`due_at = ${dueAt}, wake_at = least(wake_at, ${dueAt}), trigger_data = cast(${bind('restart.triggerData')} as text),
    updated_at = cast(${bind('restart.now')} as bigint)`;
}

/**
 * Still pending? Else a worker claimed it or it was cancelled: read again (re-entry may now reject).
 * It sets what restartAssignmentsOf sets (SQLite's scalar `min` is PostgreSQL's `least`);
 * PostgreSQL's text finds the row as sendRowOfKey does.
 */
const RESTART_PENDING_SEND = constantStatement<{ id: string }>(
  `update sends set due_at = ?, wake_at = min(wake_at, ?), trigger_data = ?, updated_at = ?
    where account_id = ? and id = ? and status = 'pending' returning id`,
  `update sends set due_at = $1, wake_at = least(wake_at, $2), trigger_data = $3, updated_at = $4
    where ctid = (select ctid from sends where id = $6 limit 1) and account_id = $5 and status = 'pending' returning id`,
);

async function restartPendingSend(q: Tx, plan: Extract<TriggerPlan, { kind: 'restart' }>): Promise<void> {
  const { rows } = await RESTART_PENDING_SEND(q, [plan.dueAt, plan.dueAt, plan.triggerData, plan.now, plan.accountId, plan.sendId]);
  if (rows.length === 0) throw new StaleRead('pending send');
}

/** The statements of this file, compiled once per shape and engine (db/constant-statements.ts). */
const STATEMENTS = new StatementShapes();

/** What contactGuard and allowanceGuard bind, by name. */
function guardValues(guard: TriggerGuard) {
  const { accountId, contact, allowance } = guard;
  return {
    accountId,
    contactId: contact.id,
    version: contact.version,
    updatedAt: contact.updatedAt,
    optedOut: contact.optedOut ? 1 : 0,
    counted: allowance?.counted,
    allowanceVersion: allowance?.version,
  };
}

/**
 * The contact as read, or no row. PostgreSQL takes the row's lock (`for update` by the update,
 * `for share` by the check) and, when a concurrent write held it, re-checks the condition on
 * the newest version of the row: a lead write (which bumps the version and stamps updated_at),
 * an opt-out, an erase (no row) or another trigger's send all make it fail. Values: guardValues.
 */
function contactGuard(bind: Bind, contactWrite: TriggerGuard['contactWrite'], engine: Engine): RawBuilder<{ id: string }> {
  const matches = sql`account_id = ${bind('accountId')} and id = ${bind('contactId')} and version = ${bind('version')}
    and updated_at = ${bind('updatedAt')} and opted_out = ${bind('optedOut')}`;
  if (contactWrite === 'bump') return sql`update contacts set version = version + 1 where ${matches} returning id`;
  return sql`select id from contacts where ${matches} ${engine === 'postgres' ? sql`for share` : sql``}`;
}

/**
 * Room left under the allowance, counting one more send: this month's count as read, plus the
 * counted sends recorded since (allowance_version moved by as many; cancellations since only
 * make the bound safer). Re-checked under the account row's lock, so two triggers near the
 * limit never both pass, and those far from it never conflict. Values: guardValues.
 */
function allowanceGuard(bind: Bind, after: RawBuilder<unknown>) {
  return sql<{ id: string }>`update accounts set allowance_version = allowance_version + 1
    where id = ${bind('accountId')} and allowance is not null
      and cast(${bind('counted')} as bigint) + (allowance_version - cast(${bind('allowanceVersion')} as bigint)) < allowance
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
  'wake_at',
  'reason',
  'to_address',
  'created_at',
  'updated_at',
  'trigger_data',
  'attempts',
] as const;

/**
 * A new send's row as SQL values, in SEND_COLUMNS' order (typed: they are selected, not inserted
 * as values), bound from the group `send` of the call's values (the NewSend itself).
 */
export function sendRowValues(bind: Bind): RawBuilder<unknown> {
  const text = (column: keyof NewSend) => sql`cast(${bind(`send.${column}`)} as text)`;
  const bigint = (column: keyof NewSend) => sql`cast(${bind(`send.${column}`)} as bigint)`;
  return sql.join([
    text('id'),
    text('account_id'),
    text('campaign_id'),
    text('contact_id'),
    text('status'),
    text('channel'),
    bigint('due_at'),
    bigint('due_at'),
    text('reason'),
    text('to_address'),
    bigint('created_at'),
    bigint('created_at'),
    text('trigger_data'),
    sql`0`,
  ]);
}

/** SEND_COLUMNS as the column list of an insert. */
export const sendColumns = () => sql.join(SEND_COLUMNS.map((c) => sql.ref(c)));

async function insertGuardedOnPostgres(q: Tx, send: NewSend, guard: TriggerGuard): Promise<void> {
  const { contactWrite } = guard;
  const allowance = guard.allowance !== undefined;
  const values = { guard: guardValues(guard), send };
  const { rows } = await STATEMENTS.run(q, `guarded ${contactWrite} ${allowance}`, values, (bind) => {
    const guarded = bindIn(bind, 'guard');
    // The account's lock comes after the contact's (`exists` runs the contact guard first), the
    // order lockContact then lockAccount kept before: no deadlock between two triggers.
    const room = allowance ? sql`, room as (${allowanceGuard(guarded, sql`and exists (select 1 from guard)`)})` : sql``;
    return sql<{ id: string }>`
      with guard as (${contactGuard(guarded, contactWrite, 'postgres')})${room},
      sent as (
        insert into sends (${sendColumns()})
        select ${sendRowValues(bind)} from guard ${allowance ? sql`cross join room` : sql``}
        returning id)
      select id from sent`;
  });
  if (rows.length === 0) throw new StaleRead(allowance ? 'contact or allowance' : 'contact');
}

async function insertGuardedOnSqlite(q: Tx, send: NewSend, guard: TriggerGuard): Promise<void> {
  const values = guardValues(guard);
  const { contactWrite } = guard;
  if ((await STATEMENTS.run(q, `guard ${contactWrite}`, values, (bind) => contactGuard(bind, contactWrite, 'sqlite'))).rows.length === 0) {
    throw new StaleRead('contact');
  }
  if (guard.allowance && (await STATEMENTS.run(q, 'allowance', values, (bind) => allowanceGuard(bind, sql``))).rows.length === 0) {
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
 * Compiled once per kind of trigger write and shape of the contact's plan.
 */
async function withContactOnPostgres(
  q: Tx,
  accountId: string,
  contactPlan: ContactWritePlan,
  plan: TriggerPlan,
  optedOut: boolean,
): Promise<string[]> {
  const shape = contactWriteShapeOf(contactPlan);
  if (plan.kind === 'restart' && shape.insert) throw new Error('a restart is of an existing contact');
  // The plan's values, and the restart's or the new send's, in groups of their own.
  const values = {
    plan: contactWriteValues(accountId, contactPlan),
    optedOut: optedOut ? 1 : 0,
    restart: plan.kind === 'restart' ? plan : undefined,
    send: plan.kind === 'insert' ? plan.send : undefined,
  };
  const { rows } = await STATEMENTS.run(q, `with contact ${plan.kind} ${contactWriteShapeKey(shape)}`, values, (bind) => {
    const planned = bindIn(bind, 'plan');
    const optOutAsRead = sql`opted_out = ${bind('optedOut')}`;
    const extras: ContactWriteExtras =
      plan.kind === 'restart'
        ? {
            before: [
              sql`lk as (select id from contacts where account_id = ${planned('accountId')} and id = ${planned('contactId')}
                and version = ${planned('version')} and ${optOutAsRead} for update)`,
              sql`r as (update sends set ${restartAssignmentsOf(bind)}
              where ${sendRowOfKey(bind('restart.sendId'))} and account_id = ${bind('restart.accountId')} and status = 'pending' and exists (select 1 from lk) returning id)`,
            ],
            requires: sql`exists (select 1 from r)`,
          }
        : {
            requires: optOutAsRead,
            after: [sql`sent as (insert into sends (${sendColumns()}) select ${sendRowValues(bind)} from c returning id)`],
          };
    return contactWriteStatement(planned, shape, extras) as RawBuilder<{ kind: string; id: string }>;
  });
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
