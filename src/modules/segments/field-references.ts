import type { Queryable } from '../../db/queryable.js';
import { selectSegmentCriteria, updateSegmentCriteria } from './field-references.repo.js';

/**
 * Saved segments name custom fields in their criteria (`fields: [{name, value}]`, the name as
 * defined) and KPIs by id (`kpis: [{id, op, value}]`). A field rename rewrites those names and a field delete is refused while a segment
 * names it (docs/decisions.md, Editing and deleting). The criteria JSON is walked as a whole,
 * so a `fields` list nested anywhere (a group of criteria) is found too.
 */

type Json = unknown;

/** Calls `visit` on every field reference (an object with a string `name` in a `fields` list) of the criteria. */
function eachFieldReference(criteria: Json, visit: (ref: { name: string }) => void): void {
  if (Array.isArray(criteria)) {
    for (const item of criteria) eachFieldReference(item, visit);
    return;
  }
  if (criteria === null || typeof criteria !== 'object') return;
  for (const [key, value] of Object.entries(criteria)) {
    if (key === 'fields' && Array.isArray(value)) {
      for (const ref of value) if (ref && typeof ref === 'object' && typeof ref.name === 'string') visit(ref);
    }
    eachFieldReference(value, visit);
  }
}

/** Whether the criteria name the field (names compared ignoring case, as contact writes match them). */
export function namesField(criteria: Json, nameKey: string): boolean {
  let found = false;
  eachFieldReference(criteria, (ref) => {
    if (ref.name.toLowerCase() === nameKey) found = true;
  });
  return found;
}

/** The criteria with every reference to the field renamed; undefined when none names it. */
export function renameFieldIn(criteria: Json, nameKey: string, newName: string): Json | undefined {
  const copy = structuredClone(criteria);
  let changed = false;
  eachFieldReference(copy, (ref) => {
    if (ref.name.toLowerCase() === nameKey) {
      ref.name = newName;
      changed = true;
    }
  });
  return changed ? copy : undefined;
}

/** The account's segments whose criteria name the field, by name. */
export async function segmentsNamingField(db: Queryable, accountId: string, nameKey: string): Promise<{ id: string; name: string }[]> {
  const rows = await selectSegmentCriteria(db, accountId);
  return rows
    .filter((row) => namesField(JSON.parse(row.criteria), nameKey))
    .map(({ id, name }) => ({ id, name }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Rewrites the field's name in every segment of the account that names it (inside the rename's transaction). */
export async function renameFieldInSegments(
  db: Queryable,
  accountId: string,
  nameKey: string,
  newName: string,
  now: number,
): Promise<void> {
  for (const row of await selectSegmentCriteria(db, accountId)) {
    const renamed = renameFieldIn(JSON.parse(row.criteria), nameKey, newName);
    if (renamed !== undefined) await updateSegmentCriteria(db, accountId, row.id, JSON.stringify(renamed), now);
  }
}

/** Whether the criteria compare the KPI (`kpis: [{id, ...}]` in any group; ids match exactly). */
export function namesKpi(criteria: Json, kpiId: string): boolean {
  if (Array.isArray(criteria)) return criteria.some((item) => namesKpi(item, kpiId));
  if (criteria === null || typeof criteria !== 'object') return false;
  return Object.entries(criteria).some(
    ([key, value]) =>
      (key === 'kpis' && Array.isArray(value) && value.some((ref) => ref && typeof ref === 'object' && ref.id === kpiId)) ||
      namesKpi(value, kpiId),
  );
}

/** The account's segments whose criteria compare the KPI, by name. */
export async function segmentsNamingKpi(db: Queryable, accountId: string, kpiId: string): Promise<{ id: string; name: string }[]> {
  const rows = await selectSegmentCriteria(db, accountId);
  return rows
    .filter((row) => namesKpi(JSON.parse(row.criteria), kpiId))
    .map(({ id, name }) => ({ id, name }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** "segment 'A': edit or delete it first", for the 409 of a definition in use. */
export function usedBy(segments: { name: string }[]): string {
  const names = segments.map((s) => `'${s.name}'`).join(', ');
  return segments.length > 1 ? `segments ${names}: edit or delete them first` : `segment ${names}: edit or delete it first`;
}
