import type { CompiledQuery } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { PlannedItem } from '../../db/item-transactions.js';
import type { Tx } from '../../db/transaction.js';
import { inWriteUnit } from '../../db/write-unit.js';
import { unlessRefused } from '../../errors.js';
import { type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import { type FirstRow, writeUnlessReadStatement } from './contact-write-first.js';
import { type ContactWritePlan, executeContactWrite } from './contact-write-plan.js';
import {
  type ContactWriteRead,
  type ContactWriteReadValues,
  contactWriteReadHasRows,
  contactWriteReadValues,
  readForContactWrite,
} from './contact-write-read.js';
import { createProblems, decideContactWrite, echo, fieldNameKey, kpiPath } from './contact-write-rules.js';
import type { LeadInput, LeadResult } from './contacts.schemas.js';
import { definitionRows, definitionsLastSeen, rememberDefinitions } from './definitions-seen.js';
import { KPI_RANGE_TEXT, microsToNumber } from './kpi-values.js';
import { normalizeLead } from './lead-input.js';

/** The 200 body of `POST /api/leads`, also what a trigger with a `lead` object gets back. */
export type ContactWriteResult = LeadResult;

/**
 * Creates or updates one contact with every rule of service-spec.md (Contact) and
 * decisions.md (Contacts), as one unit of work (src/db/write-unit.ts): ONE read of everything
 * the rules need (contact-write-read.ts), the decision here in TypeScript (a ContactWritePlan,
 * the same on both engines), then the plan applied (contact-write-plan.ts: one guarded
 * statement on PostgreSQL; with `writeFirst`, decided before the read and sent with it when the
 * decision does not need what the read finds: readOrWrite). Throws AppError (400 Validation Error, 409 Identifier belongs to
 * another contact) before anything is written; StaleRead when the contact changed since the
 * read (the caller's inWriteUnit runs it again). Runs inside the caller's transaction too, so
 * the campaign trigger can write the contact and its send atomically.
 * `at` is the JSON pointer of the lead object in the request (`/lead` in a trigger): every
 * path in `details` and `warnings` starts with it.
 */
export async function applyContactWrite(
  tx: Tx,
  accountId: string,
  input: LeadInput,
  now: number,
  at = '',
  options: { writeFirst?: boolean; inTransaction?: boolean } = {},
): Promise<ContactWriteResult> {
  const prepared = prepareContactWrite(input, at);
  const first = options.writeFirst
    ? await prepared.readOrWrite(tx, accountId, now, options.inTransaction)
    : { read: await prepared.read(tx, accountId) };
  if ('written' in first) return first.written;
  return decideAndWrite(tx, accountId, prepared, first.read, now);
}

async function decideAndWrite(
  tx: Tx,
  accountId: string,
  prepared: PreparedContactWrite,
  read: ContactWriteRead,
  now: number,
): Promise<ContactWriteResult> {
  const decided = prepared.decide(read, now);
  return decided.result(await executeContactWrite(tx, accountId, decided.plan));
}

/**
 * A lead write of a batch's item, as applyContactWrite runs it in the chunk's transaction with
 * `writeFirst`, as ONE statement sent with its neighbours' (db/pipeline.ts, item-transactions.ts):
 * undefined when its write cannot be decided before its read (the item is applied as usual).
 * When the statement wrote nothing, the rest reads the contact again, locking, and writes what
 * the rules decide, as readOrWrite does. Throws 400 when the input is refused, before anything is sent.
 */
export function plannedContactWrite(tx: Tx, accountId: string, input: LeadInput, now: number): PlannedItem<ContactWriteResult> | undefined {
  const prepared = prepareContactWrite(input);
  const first = prepared.firstWrite(tx, accountId, now, true);
  if (!first) return undefined;
  return {
    query: first.query,
    settle(rows) {
      const outcome = first.outcome(rows as FirstRow[]);
      if ('written' in outcome) return { value: outcome.written };
      return {
        rest: async (q) => {
          const read = await readForContactWrite(q, first.values, true);
          prepared.remember(accountId, read);
          return decideAndWrite(q, accountId, prepared, read, now);
        },
      };
    },
  };
}

/** A lead write decided from its read, not applied yet. */
export interface DecidedContactWrite {
  plan: ContactWritePlan;
  /** The 200 body once the plan is applied; `added`: the KPI ids whose totals it wrote. Call once. */
  result(added: string[]): ContactWriteResult;
}

/**
 * A lead write in its three steps, for a caller that applies the plan inside a statement of its
 * own (a trigger with a `lead` object on PostgreSQL, which writes the contact and the send
 * together): the input checked (throws 400 now), its one read, then the decision.
 */
export interface PreparedContactWrite {
  read(q: Tx, accountId: string): Promise<ContactWriteRead>;
  /**
   * PostgreSQL: the read, and in the same statement the write the rules
   * decide for what it finds, when they can decide it before (contact-write-first.ts): the
   * create when it finds nobody, the update when it finds the contact. `written`: the 200 body,
   * the write is done; `read`: decide and write as usual. A lead naming custom fields or KPIs
   * (whose rules need their definitions) is decided on them as this process last read them, and
   * written only if the read finds the same (definitions-seen.ts); not seen yet, it only reads.
   * `inTransaction`: a read it answers locks what it read, as `read` does, so the write decided
   * on it cannot find the contact changed (a batch's item, whose chunk has no retry of its own);
   * the statement goes first only when the update is decided too.
   */
  readOrWrite(
    q: Tx,
    accountId: string,
    now: number,
    inTransaction?: boolean,
  ): Promise<{ written: ContactWriteResult } | { read: ContactWriteRead }>;
  /**
   * readOrWrite's one statement, not run, for a caller that sends it with others; undefined
   * when readOrWrite would read first (`inTransaction` as there).
   */
  firstWrite(q: Tx, accountId: string, now: number, inTransaction?: boolean): FirstWrite | undefined;
  /** What the read binds, for a caller that compiles it into its own statement once per shape (contactWriteReadParts). */
  readValues(accountId: string): ContactWriteReadValues;
  /** Throws 409 Identifier belongs to another contact, 400 (create without a name, metadata too large), or StaleRead. */
  decide(read: ContactWriteRead, now: number): DecidedContactWrite;
  /**
   * The custom field and KPI definitions the lead names, as this process last read them
   * (definitions-seen.ts), for decisions taken before the read; undefined when one of them has
   * not been read yet. A statement that writes a plan decided on them must check that its read
   * finds `rows` (definitionsUnchangedSql), unless `rows` is undefined: the lead names none.
   */
  definitionsAssumed(accountId: string): AssumedDefinitions | undefined;
  /** Keeps what a read found of the definitions the lead names, for the next write naming them. */
  remember(accountId: string, read: ContactWriteRead): void;
  /**
   * The create for a read that finds nobody, decided before the read on `assumed`
   * (definitionsAssumed); undefined when the lead names custom fields or KPIs and `assumed` is
   * undefined, or lacks what a create needs (a name, an address). Throws as decide (metadata too large).
   */
  decideIfNobody(now: number, assumed?: AssumedDefinitions): DecidedContactWrite | undefined;
  /**
   * The update for a read that finds the contact, decided before the read when it does not
   * depend on what the read finds (decideIfFoundBeforeRead), on `assumed` as decideIfNobody; its
   * contactId is a placeholder, FOUND, for the id the read picks. Undefined when it depends on
   * the read, or the rules refuse it.
   */
  decideIfFound(now: number, assumed?: AssumedDefinitions): DecidedContactWrite | undefined;
}

/** readOrWrite's one statement (firstWrite), not run yet. */
export interface FirstWrite {
  query: CompiledQuery<FirstRow>;
  /** The values of its read, for the read to run again, locking, when it wrote nothing. */
  values: ContactWriteReadValues;
  /** The 200 body when the statement wrote; else what its read found (which locked nothing). Call once. */
  outcome(rows: readonly FirstRow[]): { written: ContactWriteResult } | { read: ContactWriteRead };
}

/** Definitions as last read (definitionsAssumed): what the rules decide on, and what the statement's read must find. */
export interface AssumedDefinitions extends Definitions {
  /** definitionRows of them; undefined when the lead names no definition (nothing to check). */
  rows?: string;
}

export function prepareContactWrite(input: LeadInput, at = ''): PreparedContactWrite {
  const lead = normalizeLead(input, at);
  const fieldKeys = [...new Set((input.fields ?? []).map((e) => fieldNameKey(e.key)))];
  const kpiIds = Object.keys(input.kpis ?? {});
  const definitions = fieldKeys.length > 0 || kpiIds.length > 0;
  // A create decided before the read, unless the rules would refuse to create (most updates name
  // no one): that refusal is the read's to make, and an error built only to be dropped costs a
  // stack trace.
  const canCreateBeforeRead = createProblems(lead, at).length === 0;
  const prepared: PreparedContactWrite = {
    read: (q, accountId) => readForContactWrite(q, prepared.readValues(accountId)),
    readValues: (accountId) => contactWriteReadValues(accountId, lead, fieldKeys, kpiIds),
    definitionsAssumed(accountId) {
      if (!definitions) return NO_DEFINITIONS;
      const seen = definitionsLastSeen(accountId, fieldKeys, kpiIds);
      return seen && { ...seen, rows: definitionRows(seen) };
    },
    remember(accountId, read) {
      if (definitions) rememberDefinitions(accountId, fieldKeys, kpiIds, read);
    },
    async readOrWrite(q, accountId, now, inTransaction = false) {
      const first = prepared.firstWrite(q, accountId, now, inTransaction);
      if (!first) return { read: remembered(accountId, await readForContactWrite(q, prepared.readValues(accountId), inTransaction)) };
      const outcome = first.outcome((await q.executeQuery(first.query)).rows);
      if ('written' in outcome) return outcome;
      // The statement's own read locks nothing: in a transaction, read again, locking.
      return { read: remembered(accountId, inTransaction ? await readForContactWrite(q, first.values, true) : outcome.read) };
    },
    firstWrite(q, accountId, now, inTransaction = false) {
      const values = prepared.readValues(accountId);
      // The definitions the lead names, as this process last read them: the rules decide on them
      // and the statement writes only if its read finds them unchanged (definitions-seen.ts).
      const assumed = prepared.definitionsAssumed(accountId);
      // Decided first, for each thing the read may find whose decision does not need what it
      // reads; a refusal (metadata too large) is the read's to make.
      const ifNobody = unlessRefused(() => prepared.decideIfNobody(now, assumed));
      const ifFound = prepared.decideIfFound(now, assumed);
      // In a transaction a fallback costs a locking read more (readOrWrite): there the statement
      // goes first only when it can update what it finds, so a contact that exists never costs
      // three statements where the locking read and the write take two.
      const decidedEnough = inTransaction ? ifFound : ifNobody || ifFound;
      if (!decidedEnough || !contactWriteReadHasRows(values)) return undefined;
      const statement = writeUnlessReadStatement(q, accountId, values, {
        ifNobody: ifNobody?.plan,
        ifFound: ifFound?.plan,
        definitions: assumed?.rows,
      });
      return {
        query: statement.query,
        values,
        outcome(rows) {
          const outcome = statement.outcome(rows);
          if ('read' in outcome) return outcome;
          if (outcome.written === 'created') return { written: ifNobody!.result(outcome.kpisAdded) };
          // The plan was decided for a placeholder id; the answer names the contact the statement updated.
          ifFound!.plan.contactId = outcome.id;
          return { written: ifFound!.result(outcome.kpisAdded) };
        },
      };
    },
    decideIfNobody(now, assumed) {
      const found = expected(assumed);
      return canCreateBeforeRead && found ? prepared.decide({ owners: {}, fields: found.fields, kpiIds: found.kpiIds }, now) : undefined;
    },
    decideIfFound(now, assumed) {
      const found = expected(assumed);
      return found && input.metadata === undefined ? decideIfFoundBeforeRead(now, found) : undefined;
    },
    decide(read, now) {
      const decision = decideContactWrite(lead, input, read, now, at);
      const { plan, warnings } = decision;
      return {
        plan,
        result(addedIds) {
          const added = new Set(addedIds);
          for (const { kpiId } of plan.kpis) {
            if (!added.has(kpiId))
              warnings.push({ path: kpiPath(at, kpiId), message: `KPI '${kpiId}' not added: its total would leave ${KPI_RANGE_TEXT}` });
          }
          const kpis =
            input.kpis === undefined
              ? undefined
              : Object.fromEntries(plan.kpis.filter((i) => added.has(i.kpiId)).map((i) => [i.kpiId, microsToNumber(i.micros)]));
          return echo(plan.contactId, plan.contact.kind === 'insert', lead, input, { fields: decision.fields, kpis }, warnings);
        },
      };
    },
  };
  /** The definitions a read is expected to find: none named, or those assumed (undefined: not known). */
  const expected = (assumed: AssumedDefinitions | undefined): Definitions | undefined => (definitions ? assumed : NO_DEFINITIONS);
  /**
   * The decision for a read that finds the contact, when it does not depend on what the read
   * finds: one identifier sent (so no 409, another contact owning another one) and no metadata
   * (its merge needs the stored value); `found`, the definitions the read is expected to find.
   * The contact is a placeholder (FOUND): the statement updates the one its read picks, without
   * a version guard.
   */
  const decideIfFoundBeforeRead = (now: number, found: Definitions): DecidedContactWrite | undefined => {
    const sent = (['byId', 'byEmail', 'byPhone'] as const).filter((_, i) => [lead.id, lead.email, lead.phone][i] !== undefined);
    if (sent.length !== 1) return undefined;
    const owners: ContactWriteRead['owners'] = { [sent[0]!]: FOUND };
    const contact = { id: FOUND, metadata: '{}', version: 0 };
    return unlessRefused(() => prepared.decide({ owners, contact, fields: found.fields, kpiIds: found.kpiIds }, now));
  };
  /** The read, its definitions kept for the next lead write naming them. */
  const remembered = (accountId: string, read: ContactWriteRead): ContactWriteRead => {
    prepared.remember(accountId, read);
    return read;
  };
  return prepared;
}

type Definitions = Pick<ContactWriteRead, 'fields' | 'kpiIds'>;

/** The definitions of a lead that names no custom field and no KPI. */
const NO_DEFINITIONS: AssumedDefinitions = { fields: [], kpiIds: [] };

/** The contact of a plan decided before its read finds it (contact-write-first.ts replaces it). */
const FOUND = '(the contact found)';

/**
 * `POST /api/leads`: one unit of work (one or two statements on PostgreSQL, no transaction); a lost
 * race (the contact changed, or a new address was taken) reads again. With an Idempotency-Key
 * the answer is stored with the effect, in one transaction (oncePerKey).
 */
export async function writeContact(db: Db, accountId: string, input: LeadInput, key?: IdempotentRequest): Promise<ContactWriteResult> {
  if (key === undefined) {
    return inWriteUnit(db, (q, unit) =>
      applyContactWrite(q, accountId, input, Date.now(), '', { writeFirst: db.engine === 'postgres' && !unit.lockFirst }),
    );
  }
  return inWriteUnit(db, (tx) => oncePerKey(tx, key, () => applyContactWrite(tx, accountId, input, Date.now())), { transaction: true });
}
