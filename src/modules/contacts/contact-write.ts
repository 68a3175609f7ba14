import type { Db } from '../../db/connect.js';
import type { Tx } from '../../db/transaction.js';
import { inWriteUnit, StaleRead } from '../../db/write-unit.js';
import { AppError, type Problem } from '../../errors.js';
import { newId } from '../../ids.js';
import { parseStoredJson } from '../../json-limits.js';
import { type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import { writeUnlessRead } from './contact-write-first.js';
import { type ContactWritePlan, executeContactWrite } from './contact-write-plan.js';
import {
  type ContactWriteRead,
  type ContactWriteReadValues,
  contactWriteReadHasRows,
  contactWriteReadValues,
  readForContactWrite,
} from './contact-write-read.js';
import type { FieldDefinition } from './contacts.repo.js';
import type { LeadInput, LeadResult } from './contacts.schemas.js';
import { definitionRows, definitionsLastSeen, rememberDefinitions } from './definitions-seen.js';
import { parseFieldValue, type StoredFieldValue } from './field-values.js';
import { KPI_RANGE_TEXT, microsToNumber, parseKpiIncrement } from './kpi-values.js';
import { MAX_METADATA_BYTES, metadataTooLarge, type NormalizedLead, normalizeLead } from './lead-input.js';
import { pointerSegment } from './normalize.js';

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
  options: { writeFirst?: boolean } = {},
): Promise<ContactWriteResult> {
  const prepared = prepareContactWrite(input, at);
  const first = options.writeFirst ? await prepared.readOrWrite(tx, accountId, now) : { read: await prepared.read(tx, accountId) };
  if ('written' in first) return first.written;
  const decided = prepared.decide(first.read, now);
  return decided.result(await executeContactWrite(tx, accountId, decided.plan));
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
   * PostgreSQL, outside a transaction: the read, and in the same statement the write the rules
   * decide for what it finds, when they can decide it before (contact-write-first.ts): the
   * create when it finds nobody, the update when it finds the contact. `written`: the 200 body,
   * the write is done; `read`: decide and write as usual. A lead naming custom fields or KPIs
   * (whose rules need their definitions) is decided on them as this process last read them, and
   * written only if the read finds the same (definitions-seen.ts); not seen yet, it only reads.
   */
  readOrWrite(q: Tx, accountId: string, now: number): Promise<{ written: ContactWriteResult } | { read: ContactWriteRead }>;
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
    async readOrWrite(q, accountId, now) {
      const values = prepared.readValues(accountId);
      // The definitions the lead names, as this process last read them: the rules decide on them
      // and the statement writes only if its read finds them unchanged (definitions-seen.ts).
      const assumed = prepared.definitionsAssumed(accountId);
      // Decided first, for each thing the read may find whose decision does not need what it reads.
      const ifNobody = assumed && canCreateBeforeRead ? decideBeforeRead({ ...NOBODY, ...assumed }, now) : undefined;
      const ifFound = assumed && input.metadata === undefined ? decideIfFoundBeforeRead(now, assumed) : undefined;
      if (!(ifNobody || ifFound) || !contactWriteReadHasRows(values))
        return { read: remembered(accountId, await readForContactWrite(q, values, false)) };
      const outcome = await writeUnlessRead(q, accountId, values, {
        ifNobody: ifNobody?.plan,
        ifFound: ifFound?.plan,
        definitions: assumed!.rows,
      });
      if ('read' in outcome) return { read: remembered(accountId, outcome.read) };
      if (outcome.written === 'created') return { written: ifNobody!.result(outcome.kpisAdded) };
      // The plan was decided for a placeholder id; the answer names the contact the statement updated.
      ifFound!.plan.contactId = outcome.id;
      return { written: ifFound!.result(outcome.kpisAdded) };
    },
    decideIfNobody(now, assumed) {
      const on = definitions ? assumed : NO_DEFINITIONS;
      return canCreateBeforeRead && on ? prepared.decide({ ...NOBODY, ...on }, now) : undefined;
    },
    decideIfFound(now, assumed) {
      const on = definitions ? assumed : NO_DEFINITIONS;
      return on && input.metadata === undefined ? decideIfFoundBeforeRead(now, on) : undefined;
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
  /** The decision for a read, decided before it is run (undefined: the rules refuse it). */
  const decideBeforeRead = (read: ContactWriteRead, now: number): DecidedContactWrite | undefined => {
    try {
      return prepared.decide(read, now);
    } catch (err) {
      if (err instanceof AppError) return undefined;
      throw err;
    }
  };
  /**
   * The decision for a read that finds the contact, when it does not depend on what the read
   * finds: one identifier sent (so no 409, another contact owning another one) and no metadata
   * (its merge needs the stored value); definitions as `assumed`. The contact is
   * a placeholder (FOUND): the statement updates the one its read picks, without a version guard.
   * `assumed`: the definitions the read is expected to find (none when the lead names none).
   */
  const decideIfFoundBeforeRead = (now: number, assumed: Definitions): DecidedContactWrite | undefined => {
    const sent = (['byId', 'byEmail', 'byPhone'] as const).filter((_, i) => [lead.id, lead.email, lead.phone][i] !== undefined);
    if (sent.length !== 1) return undefined;
    const owners: ContactWriteRead['owners'] = { [sent[0]!]: FOUND };
    return decideBeforeRead({ owners, contact: { id: FOUND, metadata: '{}', version: 0 }, ...assumed }, now);
  };
  /** The read, its definitions kept for the next lead write naming them. */
  const remembered = (accountId: string, read: ContactWriteRead): ContactWriteRead => {
    prepared.remember(accountId, read);
    return read;
  };
  return prepared;
}

/** What a read that finds nobody reads (no owner, no contact, no definitions). */
const NOBODY: ContactWriteRead = { owners: {}, fields: [], kpiIds: [] };

type Definitions = Pick<ContactWriteRead, 'fields' | 'kpiIds'>;

/** The definitions of a lead that names no custom field and no KPI. */
const NO_DEFINITIONS: AssumedDefinitions = { fields: [], kpiIds: [] };

/** The contact of a plan decided before its read finds it (contact-write-first.ts replaces it). */
const FOUND = '(the contact found)';

/** What a lead lacks to create a contact: a name, and an email or a phone. */
function createProblems(lead: NormalizedLead, at: string): Problem[] {
  const problems: Problem[] = [];
  if (lead.name === undefined) problems.push({ path: `${at}/name`, message: 'is required to create a contact (at least 2 characters)' });
  if (lead.email === undefined && lead.phone === undefined) {
    problems.push({ path: `${at}/email`, message: 'an email or a phone is required to create a contact' });
  }
  return problems;
}

/** The contact a lead write's read picked (lookup order id -> email -> phone); undefined: the write creates one. */
export function contactPickedBy(read: ContactWriteRead): string | undefined {
  return read.owners.byId ?? read.owners.byEmail ?? read.owners.byPhone;
}

/**
 * The rules, from what was read: lookup order id -> email -> phone (the first identifier that
 * matches decides); another sent identifier owned by a different contact is a 409; no match
 * creates the contact (a name and an address required). The contact found is listed again,
 * renamed, stamped, its metadata merged.
 */
function decideContactWrite(
  lead: NormalizedLead,
  input: LeadInput,
  read: ContactWriteRead,
  now: number,
  at: string,
): { plan: ContactWritePlan; warnings: Problem[]; fields?: FieldEcho } {
  const { owners } = read;
  const existing = contactPickedBy(read);
  if ((owners.byEmail !== undefined && owners.byEmail !== existing) || (owners.byPhone !== undefined && owners.byPhone !== existing)) {
    throw new AppError('IDENTIFIER_CONFLICT');
  }
  // An owner seen without its row: the contact went (erased) between the two; read again.
  if (existing !== undefined && read.contact?.id !== existing) throw new StaleRead('contact');
  let contact: ContactWritePlan['contact'];
  if (existing === undefined) {
    const problems = createProblems(lead, at);
    if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
    contact = { kind: 'insert', name: lead.name!, metadata: JSON.stringify(input.metadata ?? {}) };
  } else {
    contact = { kind: 'update', version: read.contact!.version };
    if (lead.name !== undefined) contact.name = lead.name;
    if (input.metadata !== undefined) contact.metadata = mergeMetadata(read.contact!.metadata, input.metadata, at);
  }
  const plan: ContactWritePlan = {
    contactId: existing ?? newId('ld'),
    now,
    contact,
    tagsAdd: lead.tagsAdd ?? [],
    tagsRemove: existing === undefined ? [] : (lead.tagsRemove ?? []),
    fieldSets: [],
    fieldClears: [],
    kpis: [],
  };
  if (lead.email !== undefined && owners.byEmail === undefined) plan.email = lead.email;
  if (lead.phone !== undefined && owners.byPhone === undefined) plan.phone = lead.phone;
  if (lead.note) plan.note = { id: newId('nt'), ...lead.note };
  if (input.tracker !== undefined) plan.tracker = input.tracker;

  const warnings: Problem[] = [];
  const fields = input.fields === undefined ? undefined : decideFields(plan, input.fields, read.fields, warnings, at);
  if (input.kpis !== undefined) decideKpis(plan, input.kpis, read.kpiIds, warnings, at);
  return fields === undefined ? { plan, warnings } : { plan, warnings, fields };
}

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

/** Shallow merge: keys sent replace stored ones (null included), keys not sent stay. */
function mergeMetadata(stored: string, sent: Record<string, unknown>, at: string): string {
  // Spread, not Object.assign, so a `__proto__` key stays plain data. Stored keys deeper than
  // the nesting limit (written before it existed) are cut, like on every read.
  const merged = JSON.stringify({ ...parseStoredJson<Record<string, unknown>>(stored), ...sent });
  if (Buffer.byteLength(merged, 'utf8') > MAX_METADATA_BYTES) throw new AppError('VALIDATION', { details: [metadataTooLarge(at)] });
  return merged;
}

type FieldEcho = { key: string; value: StoredFieldValue | null }[];

/** Field keys match definitions by name, ignoring case and surrounding spaces. */
const fieldNameKey = (key: string) => key.trim().toLowerCase();

/** Known fields in a valid format are set or cleared; the rest become warnings. */
function decideFields(
  plan: ContactWritePlan,
  entries: { key: string; value: unknown }[],
  definitions: FieldDefinition[],
  warnings: Problem[],
  at: string,
): FieldEcho {
  if (entries.length === 0) return [];
  const byKey = new Map(definitions.map((d) => [d.name_key, d]));
  // Keyed by field: when a call names a field twice, the last valid entry wins.
  const applied = new Map<string, { key: string; value: StoredFieldValue | null }>();
  entries.forEach((entry, i) => {
    const definition = byKey.get(fieldNameKey(entry.key));
    if (!definition) {
      warnings.push({ path: `${at}/fields/${i}`, message: `unknown custom field '${entry.key}'` });
      return;
    }
    const result = parseFieldValue(definition.type, entry.value);
    if (result.kind === 'invalid') {
      warnings.push({ path: `${at}/fields/${i}`, message: `value of custom field '${definition.name}' ${result.message}` });
      return;
    }
    applied.set(definition.id, { key: definition.name, value: result.kind === 'set' ? result.value : null });
  });
  plan.fieldSets = [...applied].filter(([, v]) => v.value !== null).map(([fieldId, v]) => ({ fieldId, json: JSON.stringify(v.value) }));
  plan.fieldClears = [...applied].filter(([, v]) => v.value === null).map(([fieldId]) => fieldId);
  return [...applied.values()];
}

const kpiPath = (at: string, kpiId: string) => `${at}/kpis/${pointerSegment(kpiId)}`;

/**
 * Known KPIs with a numeric value are to be added to the stored totals; the rest become
 * warnings. An increment that would take its total out of range is refused by the write
 * statement itself, per KPI (decisions.md, Limits): applyContactWrite warns after it.
 */
function decideKpis(plan: ContactWritePlan, sent: Record<string, unknown>, knownIds: string[], warnings: Problem[], at: string): void {
  const known = new Set(knownIds);
  for (const [kpiId, raw] of Object.entries(sent)) {
    const increment = parseKpiIncrement(raw);
    if (!known.has(kpiId)) warnings.push({ path: kpiPath(at, kpiId), message: `unknown KPI '${kpiId}'` });
    else if ('micros' in increment) plan.kpis.push({ kpiId, micros: increment.micros });
    else if (increment.problem === 'not a number')
      warnings.push({ path: kpiPath(at, kpiId), message: `value of KPI '${kpiId}' must be a number` });
    else warnings.push({ path: kpiPath(at, kpiId), message: `value of KPI '${kpiId}' must be within ${KPI_RANGE_TEXT}` });
  }
}

/** The members that were sent, in their stored form (decisions.md, Response 200). */
function echo(
  id: string,
  created: boolean,
  lead: NormalizedLead,
  input: LeadInput,
  applied: { fields?: FieldEcho; kpis?: Record<string, number> },
  warnings: Problem[],
): ContactWriteResult {
  const result: ContactWriteResult = { id, created, warnings };
  if (lead.email !== undefined) result.email = lead.email;
  if (lead.phone !== undefined) result.phone = lead.phone;
  if (lead.name !== undefined) result.name = lead.name;
  if (lead.tagsAdd !== undefined) result.tags = lead.tagsAdd;
  if (lead.tagsRemove !== undefined) result.tagsRemove = lead.tagsRemove;
  if (applied.fields !== undefined) result.fields = applied.fields;
  if (applied.kpis !== undefined) result.kpis = applied.kpis;
  if (input.metadata !== undefined) result.metadata = input.metadata;
  if (lead.note !== undefined) result.note = lead.note;
  if (input.tracker !== undefined) result.tracker = input.tracker;
  return result;
}
