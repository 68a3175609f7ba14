import type { Kysely } from 'kysely';

/**
 * Segment criteria become groups (docs/decisions.md, Segments that lead somewhere): a contact
 * matches when any group holds, each group being the AND of its conditions, events a list.
 * A segment saved before, `{event?, tags?, fields?}`, becomes the one group
 * `{groups: [{events?: [event], tags?, fields?}]}`, which selects exactly the same contacts.
 * Rows already in the new form are left as they are (the migration can run on any data).
 */
type Json = Record<string, unknown>;

function toGroups(old: Json): Json {
  if (Array.isArray(old.groups)) return old;
  const { event, ...rest } = old;
  return { groups: [{ ...(event ? { events: [event] } : {}), ...rest }] };
}

/** Back to one group when the criteria fit that form (one group, at most one event, no KPI, no new operator). */
function toSingle(criteria: Json): Json | undefined {
  const groups = criteria.groups as Json[] | undefined;
  if (!groups) return criteria;
  if (groups.length !== 1) return undefined;
  const { events, kpis, ...rest } = groups[0]!;
  const list = (events as Json[] | undefined) ?? [];
  const fields = (rest.fields as Json[] | undefined) ?? [];
  if (list.length > 1 || list.some((e) => e.negated) || kpis || fields.some((f) => f.op !== undefined && f.op !== 'eq')) return undefined;
  return { ...(list[0] ? { event: list[0] } : {}), ...rest, ...(rest.fields ? { fields: fields.map(({ op: _, ...f }) => f) } : {}) };
}

async function rewrite(db: Kysely<any>, change: (criteria: Json) => Json | undefined): Promise<void> {
  const rows: { id: string; criteria: string }[] = await db.selectFrom('segments').select(['id', 'criteria']).execute();
  for (const row of rows) {
    const changed = change(JSON.parse(row.criteria) as Json);
    if (changed === undefined) {
      await db.deleteFrom('segments').where('id', '=', row.id).execute();
      continue;
    }
    const text = JSON.stringify(changed);
    if (text !== row.criteria) await db.updateTable('segments').set({ criteria: text }).where('id', '=', row.id).execute();
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await rewrite(db, toGroups);
}

/** Segments that use what the old form cannot say (OR, negation, comparisons, KPIs) are deleted: the old code cannot read them. */
export async function down(db: Kysely<any>): Promise<void> {
  await rewrite(db, toSingle);
}
