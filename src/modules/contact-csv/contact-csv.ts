import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { EXPORT_COLUMNS } from '../../contract/admin/contact-csv.js';
import type { ContactListItem } from '../contacts/contacts.admin.service.js';

/**
 * A cell a spreadsheet would run as a formula (=, +, - or @ first; tab and carriage return
 * too, which some spreadsheets skip before reading one) gets a `'` in front, so opening an
 * export never runs what a contact's name or tag says (OWASP, CSV injection). Phones start with
 * `+`, so they carry it too; the panel's import takes it off again.
 */
export function neutralizeFormula(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

function row(c: ContactListItem): string[] {
  const cells = [c.id, c.name, c.email ?? '', c.phone ?? '', c.tags.join(', '), String(c.archived), String(c.optedOut), c.createdAt];
  return cells.map(neutralizeFormula);
}

/**
 * The contacts as CSV (RFC 4180 quoting by csv-stringify, a UTF-8 byte order mark so that
 * spreadsheets read accents right), streamed: rows are read as the client takes them
 * (backpressure), never all at once.
 */
export function contactsCsv(contacts: AsyncIterable<ContactListItem>): Readable {
  const rows = Readable.from(
    (async function* () {
      for await (const contact of contacts) yield row(contact);
    })(),
  );
  const csv = stringify({ header: true, columns: [...EXPORT_COLUMNS], bom: true, record_delimiter: '\r\n' });
  // pipeline, not pipe: a client that goes away destroys csv, which stops the reads too.
  pipeline(rows, csv, () => undefined);
  return csv;
}
