import type { CustomField, Kpi } from '../../types';

/**
 * How the import reads a CSV file: which column fills which member of a `POST /api/leads`
 * body, guessed from the headers, and each row turned into that body. The server checks and
 * writes each body exactly as `POST /api/leads` does; nothing here judges a value.
 */

/** What a column fills: one of the contact's members, a custom field (by name) or a KPI (by id), or nothing. */
export type Target =
  | { kind: 'ignore' }
  | { kind: 'id' | 'email' | 'phone' | 'name' | 'tags' }
  | { kind: 'field'; name: string }
  | { kind: 'kpi'; id: string };

/** A select's value for a target, and back. */
export const targetKey = (t: Target) => (t.kind === 'field' ? `field:${t.name}` : t.kind === 'kpi' ? `kpi:${t.id}` : t.kind);
export function targetOf(key: string): Target {
  if (key.startsWith('field:')) return { kind: 'field', name: key.slice(6) };
  if (key.startsWith('kpi:')) return { kind: 'kpi', id: key.slice(4) };
  return { kind: key as 'ignore' | 'id' | 'email' | 'phone' | 'name' | 'tags' };
}

const SIMPLE: Record<string, Target['kind']> = {
  id: 'id',
  email: 'email',
  'e-mail': 'email',
  mail: 'email',
  'email address': 'email',
  phone: 'phone',
  mobile: 'phone',
  telephone: 'phone',
  tel: 'phone',
  'phone number': 'phone',
  whatsapp: 'phone',
  name: 'name',
  'full name': 'name',
  contact: 'name',
  tags: 'tags',
  tag: 'tags',
};

const plain = (header: string) =>
  header
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, ' ');

/**
 * The target a header names: the usual names of email, phone, name and tags (the export's own
 * headers among them), else a custom field or KPI of the account named alike, else nothing.
 */
export function detectTarget(header: string, fields: CustomField[], kpis: Kpi[]): Target {
  const h = plain(header);
  const simple = SIMPLE[h];
  if (simple) return { kind: simple } as Target;
  const field = fields.find((f) => plain(f.name) === h);
  if (field) return { kind: 'field', name: field.name };
  const kpi = kpis.find((k) => plain(k.id) === h || plain(k.name) === h);
  if (kpi) return { kind: 'kpi', id: kpi.id };
  return { kind: 'ignore' };
}

/** The export puts a ' before a cell a spreadsheet would run (a phone's +): taken off again here. */
const unguard = (cell: string) => (/^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell);

/** A `POST /api/leads` body from one row. Empty cells are left out: an import never clears a value. */
export function rowToLead(row: Record<string, string | undefined>, mapping: Record<string, Target>): Record<string, unknown> {
  const lead: Record<string, unknown> = {};
  const fields: { key: string; value: string }[] = [];
  const kpis: Record<string, string> = {};
  const tags: string[] = [];
  for (const [header, target] of Object.entries(mapping)) {
    const value = unguard((row[header] ?? '').trim());
    if (value === '' || target.kind === 'ignore') continue;
    if (target.kind === 'tags')
      tags.push(
        ...value
          .split(/[,;]/)
          .map((tag) => tag.trim())
          .filter(Boolean),
      );
    else if (target.kind === 'field') fields.push({ key: target.name, value });
    else if (target.kind === 'kpi') kpis[target.id] = value;
    else lead[target.kind] = value;
  }
  if (tags.length > 0) lead.tags = tags;
  if (fields.length > 0) lead.fields = fields;
  if (Object.keys(kpis).length > 0) lead.kpis = kpis;
  return lead;
}

/** One line of the import's report: a row's error or warning, by CSV row number (the header is row 1). */
export interface RowProblem {
  row: number;
  kind: 'error' | 'warning';
  message: string;
}

interface ResultBody {
  message?: string;
  details?: { path: string; message: string }[];
  warnings?: { path: string; message: string }[];
}

/** `/email must be …` reads better as `email: must be …`; a field's path names its position in the body, not the file. */
const member = (path: string) => path.replace(/^\//, '').split('/')[0] || 'row';

/** The problems one row's result tells of: its error (with each detail) or its warnings. */
export function problemsOf(row: number, result: { status: number; body: unknown }): RowProblem[] {
  const body = (result.body ?? {}) as ResultBody;
  if (result.status !== 200) {
    const details = body.details ?? [];
    if (details.length === 0) return [{ row, kind: 'error', message: body.message ?? `failed (${result.status})` }];
    return details.map((d) => ({ row, kind: 'error', message: `${member(d.path)}: ${d.message}` }));
  }
  return (body.warnings ?? []).map((w) => ({ row, kind: 'warning', message: `${member(w.path)}: ${w.message}` }));
}
