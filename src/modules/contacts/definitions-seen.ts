import { MAX_DEFINITION_NAME } from '../../contract/constants.js';
import type { ContactWriteRead } from './contact-write-read.js';
import type { FieldDefinition } from './contacts.repo.js';

/** Definitions remembered per process: more is forgotten all at once (one forgotten costs a lead write one round trip). */
const KEPT = 10_000;

/**
 * The custom fields (by name key) and KPIs (by id) that recent lead writes and triggers with a
 * `lead` object named, as this process last read them, per account: a field's definition or
 * null (no field of that name), a KPI's existence. Only a guess: a write naming them decides on
 * it before its read and writes only if the read, in the same statement, finds exactly these
 * definitions (definitionsUnchangedSql; contact-write-first.ts, trigger-decided-first.repo.ts).
 * A field renamed, retyped, created or deleted in the panel or by another process costs that
 * write its usual read and write, and is remembered anew.
 *
 * The keys come from requests: one longer than any definition's can be (MAX_DEFINITION_NAME) is
 * never remembered, so the memory held stays bounded (KEPT entries of short keys); a write
 * naming one reads first.
 */
const fields = new Map<string, FieldDefinition | null>();
const kpis = new Map<string, boolean>();

const keyOf = (accountId: string, name: string) => `${accountId} ${name}`;

/** The definitions a lead write's read would find, as last seen; undefined when one of them was not seen. */
export function definitionsLastSeen(
  accountId: string,
  fieldKeys: readonly string[],
  kpiIds: readonly string[],
): Pick<ContactWriteRead, 'fields' | 'kpiIds'> | undefined {
  const seen: Pick<ContactWriteRead, 'fields' | 'kpiIds'> = { fields: [], kpiIds: [] };
  for (const key of fieldKeys) {
    const field = fields.get(keyOf(accountId, key));
    if (field === undefined) return undefined;
    if (field !== null) seen.fields.push(field);
  }
  for (const id of kpiIds) {
    const exists = kpis.get(keyOf(accountId, id));
    if (exists === undefined) return undefined;
    if (exists) seen.kpiIds.push(id);
  }
  return seen;
}

/** What a lead write's read found for the definitions it named (those it did not find do not exist). */
export function rememberDefinitions(
  accountId: string,
  fieldKeys: readonly string[],
  kpiIds: readonly string[],
  read: Pick<ContactWriteRead, 'fields' | 'kpiIds'>,
): void {
  const found = new Map(read.fields.map((field) => [field.name_key, field]));
  for (const key of fieldKeys) keep(fields, accountId, key, found.get(key) ?? null);
  const existing = new Set(read.kpiIds);
  for (const id of kpiIds) keep(kpis, accountId, id, existing.has(id));
}

function keep<V>(cache: Map<string, V>, accountId: string, name: string, value: V): void {
  if (name.length > MAX_DEFINITION_NAME) return;
  const key = keyOf(accountId, name);
  if (cache.size >= KEPT && !cache.has(key)) cache.clear();
  cache.set(key, value);
}

/**
 * The definitions as the read's rows would carry them (contact-write-read.ts: kind, id, a = name,
 * b = name key, c = type), in the order the statement's guard sorts them (kind, then id by its
 * UTF-8 bytes, as PostgreSQL's `collate "C"` does): JSON compared with what the read finds.
 */
export function definitionRows(definitions: Pick<ContactWriteRead, 'fields' | 'kpiIds'>): string {
  const rows: (string | null)[][] = [
    ...definitions.fields.map((f) => ['field', f.id, f.name, f.name_key, f.type]),
    ...definitions.kpiIds.map((id) => ['kpi', id, null, null, null]),
  ];
  const bytes = (text: string) => Buffer.from(text, 'utf8');
  const byId = (x: (string | null)[], y: (string | null)[]) =>
    x[0] === y[0] ? Buffer.compare(bytes(x[1]!), bytes(y[1]!)) : x[0]! < y[0]! ? -1 : 1;
  return JSON.stringify(rows.sort(byId));
}
