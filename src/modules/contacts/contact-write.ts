import type { Db } from '../../db/connect.js';
import type { Queryable } from '../../db/queryable.js';
import { inTransaction, type Tx, withUniqueRetry } from '../../db/transaction.js';
import { AppError, type Problem } from '../../errors.js';
import { newId } from '../../ids.js';
import { parseStoredJson } from '../../json-limits.js';
import { type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import type { FieldDefinition, IdentifierOwners } from './contacts.repo.js';
import * as repo from './contacts.repo.js';
import type { LeadInput, LeadResult } from './contacts.schemas.js';
import { parseFieldValue, type StoredFieldValue } from './field-values.js';
import { KPI_RANGE_TEXT, microsToNumber, parseKpiIncrement } from './kpi-values.js';
import { MAX_METADATA_BYTES, metadataTooLarge, type NormalizedLead, normalizeLead } from './lead-input.js';
import { pointerSegment } from './normalize.js';

/** The 200 body of `POST /api/leads`, also what a trigger with a `lead` object gets back. */
export type ContactWriteResult = LeadResult;

/**
 * Creates or updates one contact with every rule of service-spec.md (Contact) and
 * decisions.md (Contacts). Runs inside the caller's transaction, so the campaign trigger can
 * write the contact and its send atomically; throws AppError (400 Validation Error, 409
 * Identifier belongs to another contact) before or instead of committing anything.
 * `at` is the JSON pointer of the lead object in the request (`/lead` in a trigger): every
 * path in `details` and `warnings` starts with it.
 */
export async function applyContactWrite(tx: Tx, accountId: string, input: LeadInput, now: number, at = ''): Promise<ContactWriteResult> {
  const lead = normalizeLead(input, at);
  const found = await findAndTouch(tx, accountId, lead, now);
  const contactId = found?.contactId ?? newId('ld');
  if (found === undefined) {
    await createContact(tx, accountId, contactId, lead, input.metadata, now, at);
  } else {
    if (input.metadata !== undefined) await mergeMetadata(tx, accountId, contactId, found.storedMetadata, input.metadata, at);
    if (lead.email !== undefined && found.owners.byEmail === undefined) await repo.addEmail(tx, accountId, contactId, lead.email);
    if (lead.phone !== undefined && found.owners.byPhone === undefined) await repo.addPhone(tx, accountId, contactId, lead.phone);
    if (lead.tagsRemove?.length) await repo.removeTags(tx, accountId, contactId, lead.tagsRemove);
  }
  if (lead.tagsAdd?.length) await repo.addTags(tx, accountId, contactId, lead.tagsAdd);

  const warnings: Problem[] = [];
  const definitions = await repo.findDefinitions(
    tx,
    accountId,
    [...new Set((input.fields ?? []).map((e) => fieldNameKey(e.key)))],
    Object.keys(input.kpis ?? {}),
  );
  const fields =
    input.fields === undefined ? undefined : await applyFields(tx, accountId, contactId, input.fields, definitions.fields, warnings, at);
  const kpis =
    input.kpis === undefined ? undefined : await applyKpis(tx, accountId, contactId, input.kpis, definitions.kpiIds, warnings, at);
  if (lead.note) await repo.insertNote(tx, accountId, { id: newId('nt'), contactId, ...lead.note, now });
  if (input.tracker !== undefined) await repo.linkTracker(tx, accountId, input.tracker, contactId, now);

  return echo(contactId, found === undefined, lead, input, { fields, kpis }, warnings);
}

interface FoundContact {
  contactId: string;
  /** The metadata as stored before this write, read under the row lock. */
  storedMetadata: string;
  /** Which contact each sent identifier already belonged to (all this one, by then). */
  owners: IdentifierOwners;
}

/**
 * Lookup order id -> email -> phone: the first identifier that matches decides; another sent
 * identifier owned by a different contact is a 409 before anything is written. The contact
 * found is touched at once (listed again, renamed, stamped), which also locks its row.
 * Undefined when nothing matches: the write creates the contact.
 */
async function findAndTouch(q: Queryable, accountId: string, lead: NormalizedLead, now: number): Promise<FoundContact | undefined> {
  const change = { name: lead.name, now };
  const sent = [lead.id !== undefined, lead.email !== undefined, lead.phone !== undefined].filter(Boolean).length;
  if (sent === 1) {
    // One identifier cannot conflict with another: find and touch in a single statement.
    const by = lead.id !== undefined ? { id: lead.id } : lead.email !== undefined ? { email: lead.email } : { phone: lead.phone! };
    const row = await repo.touchContactBy(q, accountId, by, change);
    if (row === undefined) return undefined;
    const owners = 'email' in by ? { byEmail: row.id } : 'phone' in by ? { byPhone: row.id } : { byId: row.id };
    return { contactId: row.id, storedMetadata: row.metadata, owners };
  }
  const owners = await repo.findOwners(q, accountId, lead);
  const existing = owners.byId ?? owners.byEmail ?? owners.byPhone;
  if ((owners.byEmail !== undefined && owners.byEmail !== existing) || (owners.byPhone !== undefined && owners.byPhone !== existing)) {
    throw new AppError('IDENTIFIER_CONFLICT');
  }
  if (existing === undefined) return undefined;
  const storedMetadata = await repo.touchContact(q, accountId, existing, change);
  if (storedMetadata === undefined) throw new Error(`contact ${existing} vanished during its own write`);
  return { contactId: existing, storedMetadata, owners };
}

/**
 * `POST /api/leads`: one transaction; a lost race on a new address retries and then updates.
 * With an Idempotency-Key the answer is stored in that transaction (oncePerKey).
 */
export async function writeContact(db: Db, accountId: string, input: LeadInput, key?: IdempotentRequest): Promise<ContactWriteResult> {
  return withUniqueRetry(() => inTransaction(db, (tx) => oncePerKey(tx, key, () => applyContactWrite(tx, accountId, input, Date.now()))));
}

async function createContact(
  q: Queryable,
  accountId: string,
  contactId: string,
  lead: NormalizedLead,
  metadata: Record<string, unknown> | undefined,
  now: number,
  at: string,
): Promise<void> {
  const problems: Problem[] = [];
  if (lead.name === undefined) problems.push({ path: `${at}/name`, message: 'is required to create a contact (at least 2 characters)' });
  if (lead.email === undefined && lead.phone === undefined) {
    problems.push({ path: `${at}/email`, message: 'an email or a phone is required to create a contact' });
  }
  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
  await repo.insertContact(q, accountId, {
    id: contactId,
    name: lead.name!,
    archived: 0,
    opted_out: 0,
    metadata: JSON.stringify(metadata ?? {}),
    created_at: now,
    updated_at: now,
    version: 0,
  });
  if (lead.email !== undefined) await repo.addEmail(q, accountId, contactId, lead.email);
  if (lead.phone !== undefined) await repo.addPhone(q, accountId, contactId, lead.phone);
}

/** Shallow merge: keys sent replace stored ones (null included), keys not sent stay. */
async function mergeMetadata(
  q: Queryable,
  accountId: string,
  contactId: string,
  stored: string,
  sent: Record<string, unknown>,
  at: string,
): Promise<void> {
  // Spread, not Object.assign, so a `__proto__` key stays plain data. Stored keys deeper than
  // the nesting limit (written before it existed) are cut, like on every read.
  const merged = JSON.stringify({ ...parseStoredJson<Record<string, unknown>>(stored), ...sent });
  if (Buffer.byteLength(merged, 'utf8') > MAX_METADATA_BYTES) throw new AppError('VALIDATION', { details: [metadataTooLarge(at)] });
  await repo.setMetadata(q, accountId, contactId, merged);
}

type FieldEcho = { key: string; value: StoredFieldValue | null }[];

/** Field keys match definitions by name, ignoring case and surrounding spaces. */
const fieldNameKey = (key: string) => key.trim().toLowerCase();

/** Known fields in a valid format are set or cleared; the rest become warnings. */
async function applyFields(
  q: Queryable,
  accountId: string,
  contactId: string,
  entries: { key: string; value: unknown }[],
  definitions: FieldDefinition[],
  warnings: Problem[],
  at: string,
): Promise<FieldEcho> {
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

  const sets = [...applied].filter(([, v]) => v.value !== null).map(([fieldId, v]) => ({ fieldId, json: JSON.stringify(v.value) }));
  const clears = [...applied].filter(([, v]) => v.value === null).map(([fieldId]) => fieldId);
  if (sets.length > 0) await repo.upsertFieldValues(q, accountId, contactId, sets);
  if (clears.length > 0) await repo.clearFieldValues(q, accountId, contactId, clears);
  return [...applied.values()];
}

/**
 * Known KPIs with a numeric value are added to the stored totals; the rest become warnings,
 * and so does an increment that would take its total out of range (decisions.md, Limits).
 */
async function applyKpis(
  q: Queryable,
  accountId: string,
  contactId: string,
  sent: Record<string, unknown>,
  knownIds: string[],
  warnings: Problem[],
  at: string,
): Promise<Record<string, number>> {
  const entries = Object.entries(sent);
  if (entries.length === 0) return {};
  const known = new Set(knownIds);
  const increments: { kpiId: string; micros: number }[] = [];
  const pathOf = (kpiId: string) => `${at}/kpis/${pointerSegment(kpiId)}`;
  for (const [kpiId, raw] of entries) {
    const increment = parseKpiIncrement(raw);
    if (!known.has(kpiId)) warnings.push({ path: pathOf(kpiId), message: `unknown KPI '${kpiId}'` });
    else if ('micros' in increment) increments.push({ kpiId, micros: increment.micros });
    else if (increment.problem === 'not a number')
      warnings.push({ path: pathOf(kpiId), message: `value of KPI '${kpiId}' must be a number` });
    else warnings.push({ path: pathOf(kpiId), message: `value of KPI '${kpiId}' must be within ${KPI_RANGE_TEXT}` });
  }
  if (increments.length === 0) return {};
  const added = new Set(await repo.addKpis(q, accountId, contactId, increments));
  for (const { kpiId } of increments) {
    if (!added.has(kpiId))
      warnings.push({ path: pathOf(kpiId), message: `KPI '${kpiId}' not added: its total would leave ${KPI_RANGE_TEXT}` });
  }
  return Object.fromEntries(increments.filter((i) => added.has(i.kpiId)).map((i) => [i.kpiId, microsToNumber(i.micros)]));
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
