import { type Static, Type } from 'typebox';
import { ContactProfile } from '../../contract/admin/contacts.js';
import { Problems } from '../../http/openapi.js';
import { DOCUMENTED_AS } from '../../http/operation-docs.js';
import { MAX_JSON_DEPTH } from '../../json-limits.js';

/** A decimal written as text: what a person types, a point and no exponent (field-values.ts). */
const DECIMAL_TEXT = '^[+-]?(\\d+(\\.\\d+)?|\\.\\d+)$';

/**
 * The formats of a custom field's value per field type (service-spec.md, Custom field value
 * formats), for the documents: ajv takes any value, the service judges it against the field's
 * type and skips a wrong one with a warning.
 */
const FIELD_VALUE_FORMATS = {
  anyOf: [
    { title: 'String', type: 'string', description: 'String, Location (a city name), Phone (+ and country code) fields.' },
    {
      title: 'Date',
      type: 'string',
      pattern: '^(\\d{4}-\\d{2}-\\d{2}|\\d{2}/\\d{2}/\\d{4})$',
      description: 'Date fields: yyyy-mm-dd or dd/mm/yyyy.',
    },
    { title: 'Number', type: 'number', description: 'Number fields (also a decimal string such as "12.5").' },
    { title: 'Decimal string', type: 'string', pattern: DECIMAL_TEXT, description: 'Number fields: a decimal point, no exponent.' },
    { title: 'Boolean', type: 'boolean', description: 'Boolean fields (also "true" or "false" in any case).' },
    { title: 'Array', type: 'array', items: {}, description: 'Array fields: a JSON list. An empty list clears the field.' },
    { title: 'Clear', type: 'null', description: 'Clears the field (as do "" and []).' },
  ],
};

/** A KPI increment: a JSON number or a decimal string; anything else is skipped with a warning. */
const KPI_VALUE = { anyOf: [{ type: 'number' }, { type: 'string', pattern: DECIMAL_TEXT }] };

/**
 * The contact fields of service-spec.md (Contact), with exactly the spec's JSON types: ajv
 * refuses anything else with a Validation Error naming the member. Limits that depend on the
 * stored form (trimmed name, normalised tags) are checked by the service, which normalises
 * first. The campaign trigger reuses this schema for its `lead` object.
 */
export const LeadBody = Type.Object(
  {
    id: Type.Optional(
      Type.String({ description: 'Id of an existing contact (looked up first). An id that matches nothing is not an error.' }),
    ),
    email: Type.Optional(
      Type.String({ description: 'Identifies the contact (looked up second) or adds an email to it. Trimmed and lowercased.' }),
    ),
    phone: Type.Optional(
      Type.String({ description: 'International format: `+`, country code, number (looked up third) or adds a phone. Stored in E.164.' }),
    ),
    name: Type.Optional(Type.String({ description: 'At least 2 characters once trimmed, at most 255. Required to create a contact.' })),
    tags: Type.Optional(Type.Array(Type.String(), { description: 'Tags added; stored lowercase, without accents, spaces as hyphens.' })),
    tagsRemove: Type.Optional(Type.Array(Type.String(), { description: 'Tags removed, compared in stored form. Wins over `tags`.' })),
    fields: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Type.String({ maxLength: 255, description: 'Custom field name as defined in the account, any case.' }),
            value: Type.Unknown({
              maxDepth: MAX_JSON_DEPTH,
              [DOCUMENTED_AS]: FIELD_VALUE_FORMATS,
              description: 'Value in the field type\'s format; "", null or [] clears the field.',
            }),
          },
          { additionalProperties: false },
        ),
        { description: 'Custom field values. Unknown fields and wrong formats are skipped with a warning.' },
      ),
    ),
    kpis: Type.Optional(
      Type.Record(Type.String(), Type.Unknown({ [DOCUMENTED_AS]: KPI_VALUE }), {
        description:
          'KPI id -> number (or numeric string) added to the stored total. Unknown ids and non-numbers are skipped with a warning.',
      }),
    ),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        maxDepth: MAX_JSON_DEPTH,
        description: 'Free-form data, merged key by key into the stored object (16 KiB at most, 32 levels deep at most).',
      }),
    ),
    note: Type.Optional(
      Type.Object(
        {
          text: Type.String({ description: 'Non-empty, at most 10,000 characters.' }),
          createdBy: Type.String({ description: 'Non-empty, at most 255 characters.' }),
        },
        { additionalProperties: false, description: 'Adds a note to the contact.' },
      ),
    ),
    tracker: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'Visitor id from the site script; linked to this contact (moved from another one if needed).',
      }),
    ),
  },
  { additionalProperties: false, description: 'At least one of id, email, phone identifies the contact.' },
);

export type LeadInput = Static<typeof LeadBody>;

/** A field value as stored: its canonical form, null when cleared. */
const STORED_FIELD_VALUE = {
  type: ['string', 'number', 'boolean', 'array', 'null'],
  items: {},
  description: 'Stored form: text, a yyyy-mm-dd date, a number, a boolean, a list; null when cleared.',
};

/** `POST /api/leads` 200: the id, whether it was created, what was sent in stored form, and warnings. */
export const LeadResponse = Type.Object(
  {
    id: Type.String({ description: 'The contact id (ld_...); a new one when the write created the contact.' }),
    created: Type.Boolean(),
    email: Type.Optional(Type.String()),
    phone: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    tags: Type.Optional(Type.Array(Type.String(), { description: 'Tags added (stored form), without those also removed.' })),
    tagsRemove: Type.Optional(Type.Array(Type.String())),
    fields: Type.Optional(
      Type.Array(Type.Object({ key: Type.String(), value: Type.Unknown({ [DOCUMENTED_AS]: STORED_FIELD_VALUE }) }), {
        description: 'Fields applied, keyed by their defined name; value null when cleared.',
      }),
    ),
    kpis: Type.Optional(Type.Record(Type.String(), Type.Number(), { description: 'Increments applied, as numbers.' })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The metadata keys sent.' })),
    note: Type.Optional(Type.Object({ text: Type.String(), createdBy: Type.String() })),
    tracker: Type.Optional(Type.String()),
    warnings: Problems,
  },
  { description: 'Always carries `warnings` (empty when nothing was skipped).' },
);

export type LeadResult = Static<typeof LeadResponse>;

/**
 * `GET /api/leads/{id}` and `GET /api/leads?email=|phone=` 200: the contact as `herald contact show`
 * prints it, one schema with the admin panel's profile.
 */
export const ContactResponse = Type.Object(ContactProfile.properties, {
  description:
    'The contact: addresses (the first is the one messages go to), tags (stored form, alphabetical), custom field values by ' +
    'field name, KPI totals by KPI id, metadata, notes (oldest first), linked visitor ids, the archived and opted-out ' +
    'flags, and its created and updated times (ISO 8601 UTC).',
});

/** `GET /api/leads/{id}`. */
export const LeadIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255, description: 'The contact id (ld_...).' }) });

/**
 * `GET /api/leads?email=|phone=`: exactly one of them, judged like the write path's (the service
 * checks, with exact details). Other query parameters are tolerated, as on every GET form.
 */
export const LeadLookupQuery = Type.Object({
  email: Type.Optional(Type.String({ description: 'An email of the contact; trimmed and lowercased like on writes.' })),
  phone: Type.Optional(
    Type.String({
      description: 'A phone of the contact: `+` (`%2B`; a bare `+` read as a space works too), country code, number; read like on writes.',
    }),
  ),
});
export type LeadLookup = Static<typeof LeadLookupQuery>;
