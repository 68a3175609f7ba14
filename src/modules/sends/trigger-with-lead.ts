import type { Tx } from '../../db/transaction.js';
import { StaleRead } from '../../db/write-unit.js';
import type { LeadInput } from '../contacts/contacts.schemas.js';
import { contactPickedBy, type PreparedContactWrite, prepareContactWrite } from '../contacts/contacts.service.js';
import { decideTrigger, requireTriggerable, type TriggerDecision } from './trigger-plan.js';
import { readTriggerState, type TriggerContact } from './trigger-state.repo.js';
import { applyTriggerWithContactOnPostgres } from './trigger-write.repo.js';

/**
 * A trigger with a `lead` object on PostgreSQL, without a transaction (issue 12): the contact
 * write's read, the trigger's read of the contact it picked, the two decisions in TypeScript
 * (the same rules as every other path: prepareContactWrite, decideTrigger), then ONE statement
 * that writes the contact and the send together (trigger-write.repo.ts). Three round trips
 * where the transaction takes seven. Undefined when the account has an allowance: its guard
 * takes the transaction (trigger.service.ts).
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
  const read = await prepared.read(q, accountId);
  const picked = contactPickedBy(read);
  const state = await readTriggerState(q, accountId, campaignId, picked === undefined ? { lookup: undefined } : { contactId: picked }, now);
  requireTriggerable(state.campaign);
  if (state.allowance !== null) return undefined;
  const contactWrite = prepared.decide(read, now);
  // The two reads saw one contact only if they saw the same version of it.
  if (picked !== undefined && state.contact?.version !== read.contact?.version) throw new StaleRead('contact');
  const { plan } = contactWrite;
  // The contact as the trigger's rules see it once written: a first address becomes its primary.
  const contact: TriggerContact =
    state.contact === undefined
      ? {
          id: plan.contactId,
          optedOut: false,
          version: 0,
          updatedAt: now,
          email: plan.email ?? null,
          phone: plan.phone ?? null,
          lastReceiptAt: undefined,
          pendingSendId: undefined,
        }
      : { ...state.contact, email: state.contact.email ?? plan.email ?? null, phone: state.contact.phone ?? plan.phone ?? null };
  const decision = decideTrigger({ ...state, contact }, triggerData, now);
  await applyTriggerWithContactOnPostgres(q, accountId, plan, decision.plan, contact.optedOut);
  return decision;
}
