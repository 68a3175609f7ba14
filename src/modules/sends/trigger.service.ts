import type { Db } from '../../db/connect.js';
import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { Tx } from '../../db/transaction.js';
import { inWriteUnit } from '../../db/write-unit.js';
import { AppError } from '../../errors.js';
import { checkTriggerDataSize } from '../../json-limits.js';
import { applyContactWrite } from '../contacts/contacts.service.js';
import { findContactIdByLeadString, leadLookupOf, lockContactOfLead } from '../contacts/lead-lookup.js';
import { type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import { countSendsSince } from './sends.repo.js';
import type { TriggerInput, TriggerResult } from './sends.schemas.js';
import { decideTrigger, requireTriggerable, type TriggerDecision } from './trigger-plan.js';
import { readTriggerState, type TriggerLead } from './trigger-state.repo.js';
import { triggerWithLeadObject } from './trigger-with-lead.js';
import { applyTriggerPlan } from './trigger-write.repo.js';

export interface SendDeps {
  db: Db;
  /** Wakes the dispatcher for a send due at that time (in this process, or through the database). */
  wakeup?: (dueAt: number) => void;
}

/**
 * `POST|GET /api/campaigns/trigger`: one write unit (db/write-unit.ts, issue 12). It reads the
 * campaign, the contact, the recipient rules' state and the allowance in one statement
 * (trigger-state.repo.ts), decides in TypeScript (trigger-plan.ts), and records the outcome with one
 * guarded write (trigger-write.repo.ts): on PostgreSQL two round trips, no transaction; a write
 * whose guard fails (a concurrent trigger or contact write got there first) reads again.
 *
 * A `lead` object writes the contact too, after ONE read of both the contact's state and the
 * trigger's (trigger-with-lead.ts): on PostgreSQL the contact and the send in one statement,
 * no transaction; on SQLite in the unit's transaction. With an Idempotency-Key (its answer is
 * stored with the effect, oncePerKey), an account with an allowance, or a retry after a lost
 * race, the lead object's trigger is one transaction on PostgreSQL: the contact, the send and
 * the answer commit together or not at all (docs/decisions.md).
 */
export async function triggerCampaign(
  deps: SendDeps,
  accountId: string,
  input: TriggerInput,
  now = Date.now(),
  key?: IdempotentRequest,
): Promise<TriggerResult> {
  const { db } = deps;
  // Part of the request's shape (decisions.md, order of checks 4): refused before any look-up.
  if (input.data !== undefined) checkTriggerDataSize(input.data, '/data');
  const triggerData = input.data === undefined ? null : JSON.stringify(input.data);
  const { lead } = input;
  const unit = async (q: Tx, lockFirst: boolean): Promise<TriggerDecision> => {
    let contact: TriggerLead;
    if (typeof lead === 'string') {
      contact = { lookup: leadLookupOf(lead) };
      // A retry after a lost race waits for the winner here (the object form's contact
      // write locks the row by itself).
      if (lockFirst) await lockContactOfLead(q, accountId, contact.lookup);
    } else {
      // SQLite's transaction (and no allowance): one read, then the contact's and the send's
      // writes (trigger-with-lead.ts). PostgreSQL runs it without a transaction (below).
      if (!lockFirst) {
        const decision = await triggerWithLeadObject(q, accountId, input.campaignId, lead, triggerData, now);
        if (decision !== undefined) return decision;
      }
      // The campaign checks come before the contact is written (order of checks).
      requireTriggerable((await readTriggerState(q, accountId, input.campaignId, { lookup: undefined }, now)).campaign);
      contact = { contactId: (await applyContactWrite(q, accountId, lead, now, '/lead')).id };
    }
    const decision = decideTrigger(await readTriggerState(q, accountId, input.campaignId, contact, now), triggerData, now);
    await applyTriggerPlan(q, db.engine, decision.plan);
    return decision;
  };
  let decision: TriggerDecision | undefined;
  // A `lead` object on PostgreSQL: the contact and the send in one statement, no transaction
  // (trigger-with-lead.ts); a retry after a lost race takes the transaction below.
  if (typeof lead !== 'string' && key === undefined && db.engine === 'postgres') {
    decision = await inWriteUnit(db, (q, { lockFirst }) =>
      lockFirst ? unit(q, true) : triggerWithLeadObject(q, accountId, input.campaignId, lead, triggerData, now),
    );
  }
  decision ??= await inWriteUnit(
    db,
    (q, { lockFirst }) =>
      oncePerKey(
        q,
        key,
        () => unit(q, lockFirst),
        (decision) => decision.result,
      ),
    { transaction: typeof lead !== 'string' || key !== undefined },
  );
  if (decision.dueAt !== undefined) deps.wakeup?.(decision.dueAt);
  return decision.result;
}

export async function requireLead(tx: Tx, accountId: string, lead: string): Promise<string> {
  const contactId = await findContactIdByLeadString(tx, accountId, lead);
  if (!contactId) throw new AppError('LEAD_NOT_FOUND');
  return contactId;
}

/** Sends counted against the allowance this UTC calendar month, as a trigger counts them (the account page). */
export async function sendsCountedThisMonth(db: Queryable, accountId: string, now: number): Promise<number> {
  const date = new Date(now);
  return countSendsSince(kyselyOf(db), accountId, Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
}
