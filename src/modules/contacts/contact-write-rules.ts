import { StaleRead } from '../../db/write-unit.js';
import { AppError, type Problem } from '../../errors.js';
import { newId } from '../../ids.js';
import { parseStoredJson } from '../../json-limits.js';
import type { ContactWritePlan } from './contact-write-plan.js';
import type { ContactWriteRead } from './contact-write-read.js';
import type { FieldDefinition } from './contacts.repo.js';
import type { LeadInput, LeadResult } from './contacts.schemas.js';
import { parseFieldValue, type StoredFieldValue } from './field-values.js';
import { KPI_RANGE_TEXT, parseKpiIncrement } from './kpi-values.js';
import { MAX_METADATA_BYTES, metadataTooLarge, type NormalizedLead } from './lead-input.js';
import { pointerSegment } from './normalize.js';

/*
 * The rules of a lead write (service-spec.md, Contact; decisions.md, Contacts), from what its
 * read found to a ContactWritePlan and the 200 body: pure functions, the same on both engines
 * and whenever they run (after the read, or before it on what it is expected to find:
 * contact-write.ts).
 */

/** What a lead lacks to create a contact: a name, and an email or a phone. */
export function createProblems(lead: NormalizedLead, at: string): Problem[] {
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
export function decideContactWrite(
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

/** Shallow merge: keys sent replace stored ones (null included), keys not sent stay. */
function mergeMetadata(stored: string, sent: Record<string, unknown>, at: string): string {
  // Spread, not Object.assign, so a `__proto__` key stays plain data. Stored keys deeper than
  // the nesting limit (written before it existed) are cut, like on every read.
  const merged = JSON.stringify({ ...parseStoredJson<Record<string, unknown>>(stored), ...sent });
  if (Buffer.byteLength(merged, 'utf8') > MAX_METADATA_BYTES) throw new AppError('VALIDATION', { details: [metadataTooLarge(at)] });
  return merged;
}

export type FieldEcho = { key: string; value: StoredFieldValue | null }[];

/** Field keys match definitions by name, ignoring case and surrounding spaces. */
export const fieldNameKey = (key: string) => key.trim().toLowerCase();

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

export const kpiPath = (at: string, kpiId: string) => `${at}/kpis/${pointerSegment(kpiId)}`;

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
export function echo(
  id: string,
  created: boolean,
  lead: NormalizedLead,
  input: LeadInput,
  applied: { fields?: FieldEcho; kpis?: Record<string, number> },
  warnings: Problem[],
): LeadResult {
  const result: LeadResult = { id, created, warnings };
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
