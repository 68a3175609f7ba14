import type { Comparison, Criteria, Group } from '../../../../contract/admin/segments';
import type { FieldType } from '../../types';

export { MAX_SEGMENT_GROUPS as MAX_GROUPS, MAX_WITHIN_DAYS } from '../../../../contract/constants';

/** The segment builder's state: every input as typed, one entry per group (any may hold). */
export interface CriteriaForm {
  groups: GroupForm[];
}
export interface EventForm {
  negated: boolean;
  type: string;
  withinDays: string;
  metadataKey: string;
  metadataValue: string;
}
export interface ComparisonForm {
  op: Comparison;
  value: string;
  to: string;
}
export interface GroupForm {
  events: EventForm[];
  tags: string;
  fields: ({ name: string } & ComparisonForm)[];
  kpis: ({ id: string } & ComparisonForm)[];
}

export const COMPARISON_LABELS: Record<Comparison, string> = {
  eq: 'is',
  gt: 'more than',
  gte: 'at least',
  lt: 'less than',
  lte: 'at most',
  between: 'between',
};
const SYMBOLS: Record<Exclude<Comparison, 'between'>, string> = { eq: '=', gt: '>', gte: '≥', lt: '<', lte: '≤' };
/** Field types whose values have an order: the only ones compared other than by `is`. */
export const isOrdered = (type: FieldType | undefined) => type === 'number' || type === 'date';

export const emptyEvent = (): EventForm => ({ negated: false, type: '', withinDays: '30', metadataKey: '', metadataValue: '' });
export const emptyGroup = (): GroupForm => ({ events: [], tags: '', fields: [], kpis: [] });

export function emptyCriteria(): CriteriaForm {
  return { groups: [{ ...emptyGroup(), events: [emptyEvent()] }] };
}

// A value is shown as the input would show it (values saved through the API may be numbers).
const text = (value: unknown) => (value == null ? '' : String(value));

export function criteriaForm(c: Criteria): CriteriaForm {
  return {
    groups: c.groups.map((g) => ({
      events: (g.events ?? []).map((e) => ({
        negated: Boolean(e.negated),
        type: e.type,
        withinDays: String(e.withinDays),
        metadataKey: e.metadata?.key ?? '',
        metadataValue: e.metadata?.value ?? '',
      })),
      tags: (g.tags ?? []).join(', '),
      fields: (g.fields ?? []).map((f) => ({ name: f.name, op: f.op ?? 'eq', value: text(f.value), to: text(f.to) })),
      kpis: (g.kpis ?? []).map((k) => ({ id: k.id, op: k.op, value: text(k.value), to: text(k.to) })),
    })),
  };
}

export function splitTags(value: string): string[] {
  return value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** `value` and, for `between`, `to`, as typed (the API checks them against the field or KPI). */
const bounds = (c: ComparisonForm) => ({ value: c.value, ...(c.op === 'between' && { to: c.to }) });

function groupOf(f: GroupForm): Group {
  const group: Group = {};
  if (f.events.length > 0) {
    group.events = f.events.map((e) => {
      const days = e.withinDays.trim();
      return {
        type: e.type.trim(),
        // A whole number goes as a number; anything else as typed so the API names the field.
        withinDays: (/^\d+$/.test(days) ? Number(days) : days) as number,
        ...(e.metadataKey.trim() && { metadata: { key: e.metadataKey.trim(), value: e.metadataValue } }),
        ...(e.negated && { negated: true }),
      };
    });
  }
  const tags = splitTags(f.tags);
  if (tags.length > 0) group.tags = tags;
  // Rows keep their place even when not filled in yet, so error paths point at the right row.
  if (f.fields.length > 0) group.fields = f.fields.map((x) => ({ name: x.name.trim(), ...(x.op !== 'eq' && { op: x.op }), ...bounds(x) }));
  if (f.kpis.length > 0) group.kpis = f.kpis.map((x) => ({ id: x.id, op: x.op, ...bounds(x) }));
  return group;
}

/** The API's criteria; parts left empty are left out (all given parts of a group must hold). */
export function criteriaOf(f: CriteriaForm): Criteria {
  return { groups: f.groups.map(groupOf) };
}

/**
 * The criteria worth a live count: an event still without a type is not counted yet (saving
 * says what is missing); undefined when no group says anything.
 */
export function previewable(c: Criteria): Criteria | undefined {
  const groups = c.groups.map((g) => {
    const events = g.events?.filter((e) => e.type);
    const { events: _, ...rest } = g;
    return events?.length ? { ...rest, events } : rest;
  });
  const says = (g: Group) => Boolean(g.events?.length || g.tags?.length || g.fields?.length || g.kpis?.length);
  return groups.some(says) ? { groups } : undefined;
}

function comparisonText(subject: string, c: { op?: Comparison; value: unknown; to?: unknown }): string {
  const op = c.op ?? 'eq';
  if (op === 'between') return `${subject} between “${text(c.value)}” and “${text(c.to)}”`;
  return `${subject} ${SYMBOLS[op]} “${text(c.value)}”`;
}

/** One line in words, for the segment list. */
export function describeCriteria(c: Criteria): string {
  const groups = c.groups.map((g) => {
    const parts: string[] = [];
    for (const e of g.events ?? []) {
      let part = `${e.negated ? 'no' : 'an'} event “${e.type}” within ${e.withinDays} days`;
      if (e.metadata) part += ` where ${e.metadata.key} = “${e.metadata.value}”`;
      parts.push(part);
    }
    if (g.tags?.length) parts.push(`tagged ${g.tags.map((t) => `“${t}”`).join(' and ')}`);
    for (const field of g.fields ?? []) parts.push(comparisonText(field.name, field));
    for (const kpi of g.kpis ?? []) parts.push(comparisonText(`KPI ${kpi.id}`, kpi));
    return parts.length ? parts.join(' and ') : 'every contact';
  });
  const line = groups.length > 1 ? groups.map((g) => `(${g})`).join(' or ') : groups[0]!;
  return line.charAt(0).toUpperCase() + line.slice(1);
}
