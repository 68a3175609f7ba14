import type { Criteria } from '../../types';

export { MAX_WITHIN_DAYS } from '../../../../contract/constants';

/** The segment builder's state: every input as typed. */
export interface CriteriaForm {
  useEvent: boolean;
  eventType: string;
  withinDays: string;
  metadataKey: string;
  metadataValue: string;
  tags: string;
  fields: { name: string; value: string }[];
}

export function emptyCriteria(): CriteriaForm {
  return { useEvent: true, eventType: '', withinDays: '30', metadataKey: '', metadataValue: '', tags: '', fields: [] };
}

export function criteriaForm(c: Criteria): CriteriaForm {
  return {
    useEvent: Boolean(c.event),
    eventType: c.event?.type ?? '',
    withinDays: String(c.event?.withinDays ?? 30),
    metadataKey: c.event?.metadata?.key ?? '',
    metadataValue: c.event?.metadata?.value ?? '',
    tags: (c.tags ?? []).join(', '),
    // A value is shown as the input would show it (values saved through the API may be numbers).
    fields: (c.fields ?? []).map((f) => ({ name: f.name, value: f.value == null ? '' : String(f.value) })),
  };
}

export function splitTags(text: string): string[] {
  return text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** The API's criteria; parts left empty are left out (all given parts must hold). */
export function criteriaOf(f: CriteriaForm): Criteria {
  const criteria: Criteria = {};
  if (f.useEvent) {
    const days = f.withinDays.trim();
    criteria.event = {
      type: f.eventType.trim(),
      // A whole number goes as a number; anything else as typed so the API names the field.
      withinDays: (/^\d+$/.test(days) ? Number(days) : days) as number,
    };
    if (f.metadataKey.trim()) criteria.event.metadata = { key: f.metadataKey.trim(), value: f.metadataValue };
  }
  const tags = splitTags(f.tags);
  if (tags.length > 0) criteria.tags = tags;
  const fields = f.fields.filter((x) => x.name.trim()).map((x) => ({ name: x.name.trim(), value: x.value }));
  if (fields.length > 0) criteria.fields = fields;
  return criteria;
}

/** True when the criteria say something: an event with a type, a tag or a field. */
export function hasCriteria(c: Criteria): boolean {
  return Boolean(c.event?.type || c.tags?.length || c.fields?.length);
}

/** One line in words, for the segment list. */
export function describeCriteria(c: Criteria): string {
  const parts: string[] = [];
  if (c.event) {
    let text = `event “${c.event.type}” within ${c.event.withinDays} days`;
    if (c.event.metadata) text += ` where ${c.event.metadata.key} = “${c.event.metadata.value}”`;
    parts.push(text);
  }
  if (c.tags?.length) parts.push(`tagged ${c.tags.map((t) => `“${t}”`).join(' and ')}`);
  for (const field of c.fields ?? []) parts.push(`${field.name} = “${field.value}”`);
  return parts.length ? parts.join(' and ') : 'Every contact';
}
