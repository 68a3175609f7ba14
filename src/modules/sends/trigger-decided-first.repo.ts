import { type RawBuilder, sql } from 'kysely';
import { bindIn, StatementShapes } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import { unlessRefused } from '../../errors.js';
import type { DecidedContactWrite, PreparedContactWrite } from '../contacts/contact-write.js';
import type { ContactWritePlan } from '../contacts/contact-write-plan.js';
import { contactWriteParts, contactWriteShapeKey, contactWriteShapeOf, contactWriteValues } from '../contacts/contact-write-plan.js';
import { contactWriteReadShape, definitionsUnchangedSql, nobodyFoundSql } from '../contacts/contact-write-read.js';
import { campaignLastSeen } from './trigger-campaigns-seen.js';
import {
  type LeadTriggerRead,
  type LeadTriggerReadRow,
  leadTriggerReadOf,
  leadTriggerReadSql,
  leadTriggerReadValues,
  readForLeadTrigger,
} from './trigger-lead-read.js';
import { decideTrigger, type TriggerDecision } from './trigger-plan.js';
import type { TriggerCampaign, TriggerContact } from './trigger-state.repo.js';
import { restartAssignmentsOf, sendColumns, sendRowOfKey, sendRowValues } from './trigger-write.repo.js';

/** The texts of readOrWriteLeadTrigger, compiled once per shape of the lead's read and of each plan. */
const STATEMENTS = new StatementShapes();

/** A new contact as the trigger's rules see it once its plan is written: a first address becomes its primary. */
export function newContactOf(plan: ContactWritePlan, now: number): TriggerContact {
  return {
    id: plan.contactId,
    optedOut: false,
    version: 0,
    updatedAt: now,
    email: plan.email ?? null,
    phone: plan.phone ?? null,
    lastReceiptAt: undefined,
    pendingSendId: undefined,
  };
}

/** The pending send of a restart decided before the read (the statement's `rs` names the real one). */
const PENDING = '(the pending send found)';

/** Decisions taken before the read, each for what the read may find, with what their write needs. */
interface DecidedFirst {
  campaign: TriggerCampaign;
  /** The definitions the lead's plans were decided on, to check (AssumedDefinitions.rows); undefined: none named. */
  definitions: string | undefined;
  /** Someone new: the contact's create and the trigger's new send. */
  ifNobody?: {
    contactWrite: DecidedContactWrite;
    decision: TriggerDecision;
    send: Extract<TriggerDecision['plan'], { kind: 'insert' }>['send'];
  };
  /** A contact found with a pending send of this Delay campaign: its update, and the restart. */
  ifPending?: { contactWrite: DecidedContactWrite; decision: TriggerDecision; dueAt: number };
}

/**
 * A trigger with a `lead` object on PostgreSQL, first attempt (issue 12): its read
 * (trigger-lead-read.ts) and, in the SAME statement, the write the rules (decideTrigger and the
 * lead's, the same as on every path) decide before the read for two things it may find, with
 * the campaign as this process last read it (trigger-campaigns-seen.ts):
 * - nobody for the lead's identifiers: the contact is created and its send inserted (a new
 *   contact has no receipt, no pending send and no opt-out, so the rules need nothing else);
 * - on a Delay campaign, the contact, not opted out, with a pending send of the campaign: the
 *   send's timer restarts and the contact is written (the lead's update, when it does not
 *   depend on what is read: one identifier, no metadata).
 * Custom fields and KPIs the lead names are decided on as this process last read them
 * (definitions-seen.ts), and both writes also need the read to find those.
 * Each writes only when the statement's own read finds what it was decided for, the campaign
 * with the channel, mode and delay the decision used, triggerable, and an account without
 * allowance; the restart re-checks under the contact's row lock that it is not opted out, and
 * the send that it is still pending. Otherwise nothing is written and the read comes back,
 * for the usual decision and write. So these two triggers take one round trip, any other two.
 *
 * Two triggers creating one new address both find nobody: the second insert of the address is
 * a unique violation, which fails its whole statement, and inWriteUnit runs the unit again.
 */
export async function readOrWriteLeadTrigger(
  q: Tx,
  accountId: string,
  campaignId: string,
  prepared: PreparedContactWrite,
  triggerData: string | null,
  now: number,
): Promise<{ decision: TriggerDecision } | LeadTriggerRead> {
  const first = decideFirst(accountId, campaignId, prepared, triggerData, now);
  if (first === undefined) return readForLeadTrigger(q, accountId, campaignId, prepared, now);
  const { campaign, definitions, ifNobody, ifPending } = first;
  const readValues = prepared.readValues(accountId);
  const nobodyShape = ifNobody && contactWriteShapeOf(ifNobody.contactWrite.plan);
  const pendingShape = ifPending && contactWriteShapeOf(ifPending.contactWrite.plan);
  const values = {
    read: leadTriggerReadValues(readValues, campaignId, now),
    n: ifNobody && contactWriteValues(accountId, ifNobody.contactWrite.plan),
    send: ifNobody?.send,
    u: ifPending && contactWriteValues(accountId, ifPending.contactWrite.plan),
    restart: ifPending && { dueAt: ifPending.dueAt, triggerData, now },
    seen: { channel: campaign.channel, mode: campaign.mode, delaySeconds: campaign.delaySeconds },
    definitions,
  };
  const key = `${contactWriteReadShape(readValues)} ${nobodyShape ? contactWriteShapeKey(nobodyShape) : '-'} ${pendingShape ? contactWriteShapeKey(pendingShape) : '-'}${definitions === undefined ? '' : ' d'}`;
  const { rows } = await STATEMENTS.run<{ kind: string; id: string | null }>(q, key, values, (bind) => {
    const a = bind('read.accountId');
    const parts: RawBuilder<unknown>[] = [
      sql`r as (${leadTriggerReadSql(readValues, bindIn(bind, 'read'))})`,
      // The decisions' common premises, on the read's own rows (one snapshot with the writes).
      sql`seen as (select contact_id, opted_out, pending_id from r
        where campaign_id is not null and schedule = 'api' and active = 1 and allowance is null
          and channel = cast(${bind('seen.channel')} as text) and mode = cast(${bind('seen.mode')} as text)
          and delay_seconds = cast(${bind('seen.delaySeconds')} as integer)${definitions === undefined ? sql`` : sql` and ${definitionsUnchangedSql(bind)}`} limit 1)`,
    ];
    const results: RawBuilder<unknown>[] = [];
    const written: RawBuilder<unknown>[] = [];
    if (nobodyShape) {
      // Nobody: no owner and no contact among the read's rows (its definitions' rows aside).
      const nobody = sql`exists (select 1 from seen) and ${nobodyFoundSql()}`;
      const create = contactWriteParts(bindIn(bind, 'n'), nobodyShape, {
        insertOnlyIf: nobody,
        after: [sql`sent as (insert into sends (${sendColumns()}) select ${sendRowValues(bind)} from c returning id)`],
      });
      parts.push(...create.parts);
      results.push(...create.results);
      written.push(sql`not exists (select 1 from c)`);
    }
    if (pendingShape) {
      // The contact the read found, locked, still not opted out; then its send, still pending;
      // then the contact's update: the order of every trigger's writes (contact, then send).
      // The send is found by its key, then updated by its row address (sendRowOfKey).
      const restart = contactWriteParts(
        bindIn(bind, 'u'),
        pendingShape,
        {
          before: [
            sql`lk as (select id from contacts where account_id = ${a} and id = (select contact_id from seen where opted_out = 0)
              and opted_out = 0 and exists (select 1 from seen where pending_id is not null) for update)`,
            sql`rs as (update sends set ${restartAssignmentsOf(bind)}
              where ${sendRowOfKey(sql`(select pending_id from seen)`)} and account_id = ${a} and status = 'pending' and exists (select 1 from lk) returning id)`,
          ],
          updateFound: sql`(select id from lk)`,
          requires: sql`exists (select 1 from rs)`,
          results: [sql`select 'restarted' as kind, id from rs`],
        },
        'u_',
      );
      parts.push(...restart.parts);
      results.push(...restart.results);
      written.push(sql`not exists (select 1 from u_c)`);
    }
    // The read's rows as one JSON array (one column, like the other result rows), when nothing was written.
    results.push(sql`select 'read' as kind, cast(json_agg(r) as text) as id from r where ${sql.join(written, sql` and `)}`);
    return sql`with ${sql.join(parts, sql`, `)} ${sql.join(results, sql` union all `)}` as RawBuilder<{ kind: string; id: string | null }>;
  });
  const idOf = (kind: string) => rows.find((row) => row.kind === kind)?.id;
  if (ifNobody && idOf('contact')) return { decision: ifNobody.decision };
  const contactId = idOf('u_contact');
  const sendId = idOf('restarted');
  if (ifPending && contactId && sendId) {
    // The answer names the contact and the send the statement found (the decision had placeholders).
    const { decision } = ifPending;
    return { decision: { ...decision, result: { ...decision.result, leadId: contactId, sendId } } };
  }
  const read = idOf('read');
  return leadTriggerReadOf(accountId, campaignId, read ? (JSON.parse(read) as LeadTriggerReadRow[]) : []);
}

/** What the rules decide before the read, with the campaign last seen; undefined when nothing can be. */
function decideFirst(
  accountId: string,
  campaignId: string,
  prepared: PreparedContactWrite,
  triggerData: string | null,
  now: number,
): DecidedFirst | undefined {
  const campaign = campaignLastSeen(accountId, campaignId);
  // The custom fields and KPIs the lead names, as last read: checked by the statement's read too.
  const assumed = prepared.definitionsAssumed(accountId);
  if (campaign === undefined || assumed === undefined) return undefined;
  const first: DecidedFirst = { campaign, definitions: assumed.rows };
  const nobody = unlessRefused(() => prepared.decideIfNobody(now, assumed));
  if (nobody) {
    const decision = unlessRefused(() =>
      decideTrigger({ campaign, contact: newContactOf(nobody.plan, now), allowance: null }, triggerData, now),
    );
    if (decision?.plan.kind === 'insert') first.ifNobody = { contactWrite: nobody, decision, send: decision.plan.send };
  }
  const found = campaign.mode === 'delay' ? prepared.decideIfFound(now, assumed) : undefined;
  if (found) {
    const contact: TriggerContact = { ...newContactOf(found.plan, now), pendingSendId: PENDING };
    const decision = unlessRefused(() => decideTrigger({ campaign, contact, allowance: null }, triggerData, now));
    if (decision?.plan.kind === 'restart') first.ifPending = { contactWrite: found, decision, dueAt: decision.plan.dueAt };
  }
  return first.ifNobody || first.ifPending ? first : undefined;
}
