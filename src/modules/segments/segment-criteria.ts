import type { Criteria, CriteriaInput } from '../../contract/admin/segments.js';
import type { Db } from '../../db/connect.js';
import { AppError, type Problem } from '../../errors.js';
import { parseFieldValue } from '../contacts/field-values.js';
import { normalizeTag } from '../contacts/normalize.js';
import { fieldsByName } from './segments.repo.js';

export type { FieldRefs } from './segments.repo.js';
/**
 * Criteria as saved: tags in stored form, field names as defined, field values as the user
 * wrote them (so the form shows them back unchanged); each value is read with its field's
 * rules whenever the segment is evaluated.
 */
export type { Criteria };

/**
 * Checks criteria against the account's definitions and puts them in saved form. A tag is
 * compared as the API stores it ("Black Friday" finds black-friday); a field value must be
 * valid for its field's type under the rules of contact writes (so "12.50" finds a Number
 * field written as 12.5). Every problem is reported at once, with its path in the request body.
 */
export async function normalizeCriteria(db: Db, accountId: string, input: CriteriaInput, base = '/criteria'): Promise<Criteria> {
  const problems: Problem[] = [];
  const criteria: Criteria = {};
  if (input.event) {
    criteria.event = { type: input.event.type, withinDays: input.event.withinDays };
    if (input.event.metadata) criteria.event.metadata = { ...input.event.metadata };
  }
  if (input.tags) {
    const tags = [...new Set(input.tags.map(normalizeTag))];
    input.tags.forEach(
      (tag, i) =>
        normalizeTag(tag) === '' && problems.push({ path: `${base}/tags/${i}`, message: 'a tag needs at least one letter or digit' }),
    );
    criteria.tags = tags.filter((t) => t !== '');
  }
  if (input.fields) {
    const byKey = await fieldsByName(
      db,
      accountId,
      input.fields.map((f) => f.name.trim()),
    );
    criteria.fields = [];
    input.fields.forEach((entry, i) => {
      const definition = byKey.get(entry.name.trim().toLowerCase());
      if (!definition) return problems.push({ path: `${base}/fields/${i}/name`, message: `unknown custom field '${entry.name}'` });
      const parsed = parseFieldValue(definition.type, entry.value);
      if (parsed.kind === 'clear') return problems.push({ path: `${base}/fields/${i}/value`, message: 'a value is required' });
      if (parsed.kind === 'invalid')
        return problems.push({
          path: `${base}/fields/${i}/value`,
          message: `value of custom field '${definition.name}' ${parsed.message}`,
        });
      criteria.fields!.push({ name: definition.name, value: typeof entry.value === 'string' ? entry.value.trim() : entry.value });
    });
  }
  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
  return criteria;
}
