import { onPostgres } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import type { LeadInput } from '../contacts/contacts.schemas.js';
import { type PreparedContactWrite, prepareContactWrite } from '../contacts/contacts.service.js';
import { newContactOf, readOrWriteLeadTrigger } from './trigger-decided-first.repo.js';
import { readForLeadTrigger } from './trigger-lead-read.js';
import { decideTrigger, requireTriggerable, type TriggerDecision } from './trigger-plan.js';
import { readTriggerState, type TriggerContact } from './trigger-state.repo.js';
import { applyTriggerWithContact } from './trigger-write.repo.js';

/**
 * A trigger with a `lead` object (issue 12), on both engines: ONE read of the contact write's
 * state and the trigger's for the contact it picks (trigger-lead-read.ts; on PostgreSQL with
 * the write for someone new in the same statement, trigger-decided-first.repo.ts), the two decisions in
 * TypeScript (the same rules as every other path: prepareContactWrite, decideTrigger), then the
 * write of the contact and the send together (trigger-write.repo.ts): on PostgreSQL ONE
 * statement, without a transaction, so two round trips where the transaction takes seven; on
 * SQLite the contact's statements and the send's inside the unit's transaction. Undefined when
 * the account has an allowance: its guard takes the general path (trigger.service.ts).
 */
export async function triggerWithLeadObject(
  q: Tx,
  accountId: string,
  campaignId: string,
  lead: LeadInput,
  triggerData: string | null,
  now: number,
): Promise<TriggerDecision | undefined> {
  let prepared: PreparedContactWrite;
  try {
    prepared = prepareContactWrite(lead, '/lead');
  } catch (err) {
    // The campaign's checks come before the lead's (order of checks).
    requireTriggerable((await readTriggerState(q, accountId, campaignId, { lookup: undefined }, now)).campaign);
    throw err;
  }
  // PostgreSQL: the read, and in the same statement the write when the lead is someone new (trigger-decided-first.repo.ts).
  const first = onPostgres(q)
    ? await readOrWriteLeadTrigger(q, accountId, campaignId, prepared, triggerData, now)
    : await readForLeadTrigger(q, accountId, campaignId, prepared, now);
  if ('decision' in first) return first.decision;
  const { read, state } = first;
  // Only PostgreSQL decides on remembered definitions (trigger-decided-first.repo.ts).
  if (onPostgres(q)) prepared.remember(accountId, read);
  requireTriggerable(state.campaign);
  if (state.allowance !== null) return undefined;
  const contactWrite = prepared.decide(read, now);
  const { plan } = contactWrite;
  // The contact as the trigger's rules see it once written: a first address becomes its primary.
  const contact: TriggerContact =
    state.contact === undefined
      ? newContactOf(plan, now)
      : { ...state.contact, email: state.contact.email ?? plan.email ?? null, phone: state.contact.phone ?? plan.phone ?? null };
  const decision = decideTrigger({ ...state, contact }, triggerData, now);
  await applyTriggerWithContact(q, accountId, plan, decision.plan, contact.optedOut);
  return decision;
}
