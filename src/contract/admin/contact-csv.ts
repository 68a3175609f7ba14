import { type Static, Type } from 'typebox';
import { ERROR_MESSAGE, QueryBoolean } from '../common.js';

/**
 * The contact list at scale (docs/admin-api.md, Contacts): the count of a search, the CSV
 * export of a search or of a segment, and the CSV import the panel sends in chunks of rows.
 */

/** The contact list's filters without paging: what `/contacts/count` and `/contacts/export` read. */
export const ContactFilterQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 255 })),
    tag: Type.Optional(Type.String({ maxLength: 255 })),
    archived: Type.Optional(QueryBoolean),
    optedOut: Type.Optional(QueryBoolean),
  },
  { additionalProperties: false },
);
export type ContactFilterQuery = Static<typeof ContactFilterQuery>;

export const ContactCount = Type.Object({ count: Type.Integer({ minimum: 0, description: 'Contacts matching the filters, all pages.' }) });
export type ContactCount = Static<typeof ContactCount>;

/** Rows one import request carries: the panel sends a file in chunks of at most this many. */
export const MAX_IMPORT_ROWS = 1000;

export const ContactImportBody = Type.Object(
  {
    dryRun: Type.Optional(
      Type.Boolean({ description: 'true: every row is checked and written in a transaction that is rolled back (the preview).' }),
    ),
    items: Type.Array(Type.Unknown({ description: 'A `POST /api/leads` body: one CSV row as the panel mapped it.' }), {
      minItems: 1,
      maxItems: MAX_IMPORT_ROWS,
      [ERROR_MESSAGE]: `must be a list of 1 to ${MAX_IMPORT_ROWS} items`,
      description: `1 to ${MAX_IMPORT_ROWS} rows, applied in order.`,
    }),
  },
  { additionalProperties: false },
);
export type ContactImportBody = Static<typeof ContactImportBody>;

export const ContactImportResults = Type.Object(
  {
    results: Type.Array(
      Type.Object({
        status: Type.Integer({ description: 'The status `POST /api/leads` would have answered for the row.' }),
        body: Type.Unknown({ description: 'Its body: the written contact with its warnings, or the error body with `details`.' }),
      }),
    ),
  },
  { description: 'One result per row, in order.' },
);
export type ContactImportResults = Static<typeof ContactImportResults>;

/** The export's columns, in order (the import reads the same headers). */
export const EXPORT_COLUMNS = ['id', 'name', 'email', 'phone', 'tags', 'archived', 'opted_out', 'created_at'] as const;
