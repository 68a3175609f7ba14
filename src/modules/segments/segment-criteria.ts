import type { Comparison, Criteria, CriteriaInput, Group, GroupInput } from '../../contract/admin/segments.js';
import type { FieldType } from '../../contract/constants.js';
import type { Db } from '../../db/connect.js';
import { AppError, type Problem } from '../../errors.js';
import { parseFieldValue } from '../contacts/field-values.js';
import { KPI_RANGE_TEXT, parseKpiIncrement } from '../contacts/kpi-values.js';
import { normalizeTag } from '../contacts/normalize.js';
import { type Definitions, definitionsOf } from './segments.repo.js';

export type { Definitions, FieldRefs } from './segments.repo.js';
/**
 * Criteria as saved: groups (any may hold) of conditions (all must hold); tags in stored
 * form, field names as defined, field and KPI values as the user wrote them (so the form shows
 * them back unchanged); each value is read with its field's or KPI's rules whenever the
 * segment is evaluated.
 */
export type { Criteria, Group };

/** Field types whose values have an order: the only ones gt/gte/lt/lte/between apply to. */
export const ORDERED_TYPES: readonly FieldType[] = ['number', 'date'];

/** The names and KPI ids the criteria refer to, for one look-up of their definitions. */
export function referencesOf(criteria: { groups: (Group | GroupInput)[] }) {
  return {
    fieldNames: criteria.groups.flatMap((g) => (g.fields ?? []).map((f) => f.name.trim())),
    kpiIds: criteria.groups.flatMap((g) => (g.kpis ?? []).map((k) => k.id)),
  };
}

/**
 * Checks criteria against the account's definitions and puts them in saved form. A tag is
 * compared as the API stores it ("Black Friday" finds black-friday); a field value must be
 * valid for its field's type under the rules of contact writes (so "12.50" finds a Number
 * field written as 12.5), a KPI value under the rules of KPI increments. Every problem is
 * reported at once, with its path in the request body.
 */
export async function normalizeCriteria(db: Db, accountId: string, input: CriteriaInput, base = '/criteria'): Promise<Criteria> {
  const problems: Problem[] = [];
  const { groups, bases } = groupsOf(input, base, problems);
  const definitions = await definitionsOf(db, accountId, referencesOf({ groups }));
  const normalized = groups.map((group, g) => normalizeGroup(group, bases[g]!, definitions, problems));
  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
  return { groups: normalized };
}

/**
 * The groups of the input, and the path of each in the request body. The one-group form of
 * segments saved before groups (`event`, `tags`, `fields` at the top) is that one group, its
 * problems reported at the paths it was sent with.
 */
function groupsOf(input: CriteriaInput, base: string, problems: Problem[]): { groups: GroupInput[]; bases: string[] } {
  const { groups, event, ...rest } = input;
  if (groups === undefined) {
    return { groups: [{ ...rest, ...(event && { events: [event] }) }], bases: [base] };
  }
  for (const member of ['event', 'tags', 'fields'] as const)
    if (input[member] !== undefined)
      problems.push({ path: `${base}/${member}`, message: `'${member}' goes inside a group when 'groups' is given` });
  return { groups, bases: groups.map((_, g) => `${base}/groups/${g}`) };
}

function normalizeGroup(input: GroupInput, base: string, definitions: Definitions, problems: Problem[]): Group {
  const group: Group = {};
  if (input.events) {
    group.events = input.events.map((event) => ({
      type: event.type,
      withinDays: event.withinDays,
      ...(event.metadata && { metadata: { ...event.metadata } }),
      ...(event.negated && { negated: true }),
    }));
  }
  if (input.tags) {
    input.tags.forEach(
      (tag, i) =>
        normalizeTag(tag) === '' && problems.push({ path: `${base}/tags/${i}`, message: 'a tag needs at least one letter or digit' }),
    );
    group.tags = [...new Set(input.tags.map(normalizeTag))].filter((t) => t !== '');
  }
  if (input.fields) {
    group.fields = [];
    input.fields.forEach((entry, i) => {
      const at = `${base}/fields/${i}`;
      const definition = definitions.fields.get(entry.name.trim().toLowerCase());
      if (!definition) return problems.push({ path: `${at}/name`, message: `unknown custom field '${entry.name}'` });
      const op = entry.op ?? 'eq';
      if (op !== 'eq' && !ORDERED_TYPES.includes(definition.type))
        return problems.push({
          path: `${at}/op`,
          message: `'${op}' compares Number and Date fields only; '${definition.name}' is ${definition.type}`,
        });
      const check = (value: unknown, path: string) => {
        const parsed = parseFieldValue(definition.type, value);
        if (parsed.kind === 'clear') problems.push({ path, message: 'a value is required' });
        else if (parsed.kind === 'invalid')
          problems.push({ path, message: `value of custom field '${definition.name}' ${parsed.message}` });
        return parsed.kind === 'set' ? parsed.value : undefined;
      };
      const bounds = checkRange(op, entry, at, check, problems);
      if (bounds && bounds[1] !== undefined && bounds[0]! > bounds[1])
        problems.push({ path: `${at}/to`, message: '`to` must not be below `value`' });
      group.fields!.push({ name: definition.name, ...(entry.op !== undefined && { op: entry.op }), ...written(entry) });
    });
  }
  if (input.kpis) {
    group.kpis = [];
    input.kpis.forEach((entry, i) => {
      const at = `${base}/kpis/${i}`;
      if (!definitions.kpis.has(entry.id)) return problems.push({ path: `${at}/id`, message: `unknown KPI '${entry.id}'` });
      const check = (value: unknown, path: string) => {
        const parsed = parseKpiIncrement(value);
        if ('micros' in parsed) return parsed.micros;
        problems.push({
          path,
          message: parsed.problem === 'not a number' ? `value of KPI '${entry.id}' must be a number` : `must be within ${KPI_RANGE_TEXT}`,
        });
        return undefined;
      };
      const bounds = checkRange(entry.op, entry, at, check, problems);
      if (bounds && bounds[1] !== undefined && bounds[0]! > bounds[1])
        problems.push({ path: `${at}/to`, message: '`to` must not be below `value`' });
      group.kpis!.push({ id: entry.id, op: entry.op, ...written(entry) });
    });
  }
  return group;
}

/**
 * `value` (and `to`, required by `between`, refused otherwise) read with `check`; both bounds
 * when both are valid (the caller compares them), else undefined.
 */
function checkRange<T>(
  op: Comparison,
  entry: { value: unknown; to?: unknown },
  at: string,
  check: (value: unknown, path: string) => T | undefined,
  problems: Problem[],
): [T, T | undefined] | undefined {
  const low = check(entry.value, `${at}/value`);
  if (op !== 'between') {
    if (entry.to !== undefined) problems.push({ path: `${at}/to`, message: '`to` goes with `between` only' });
    return low === undefined ? undefined : [low, undefined];
  }
  if (entry.to === undefined) {
    problems.push({ path: `${at}/to`, message: '`between` needs `to`' });
    return undefined;
  }
  const high = check(entry.to, `${at}/to`);
  return low === undefined || high === undefined ? undefined : [low, high];
}

/** The value (and `to`) as written, strings trimmed. */
function written(entry: { value: unknown; to?: unknown }) {
  const trim = (v: unknown) => (typeof v === 'string' ? v.trim() : v);
  return { value: trim(entry.value), ...(entry.to !== undefined && { to: trim(entry.to) }) };
}
