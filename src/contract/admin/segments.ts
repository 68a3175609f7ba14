import { type Static, Type } from 'typebox';
import { IdParams, NextCursor, NoContent, PageQuery, Timestamp } from '../common.js';
import { MAX_JSON_DEPTH, MAX_WITHIN_DAYS } from '../constants.js';
import { ContactSummary } from './contacts.js';

/** The admin API's saved segments (docs/admin-api.md, Segments): request and response schemas. */

export { IdParams as SegmentIdParams, NoContent as SegmentDeleted, PageQuery as SegmentContactsQuery };

const MAX_PARTS = 20;

/**
 * A segment's criteria: every part given must hold (AND). `event.type` is compared exactly
 * (case included, as the spec says); a metadata value is compared as text.
 */
export const Criteria = Type.Object(
  {
    event: Type.Optional(
      Type.Object(
        {
          type: Type.String({ minLength: 1, maxLength: 255 }),
          withinDays: Type.Integer({ minimum: 1, maximum: MAX_WITHIN_DAYS }),
          metadata: Type.Optional(
            Type.Object(
              { key: Type.String({ minLength: 1, maxLength: 255 }), value: Type.String({ maxLength: 10_000 }) },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: MAX_PARTS })),
    fields: Type.Optional(
      Type.Array(
        Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 255 }), value: Type.Unknown({ maxDepth: MAX_JSON_DEPTH }) },
          { additionalProperties: false },
        ),
        { maxItems: MAX_PARTS },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CriteriaInput = Static<typeof Criteria>;

/** `POST /segments`, `PUT /segments/:id`. */
export const SegmentBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255 }), criteria: Criteria },
  { additionalProperties: false },
);
export type SegmentInput = Static<typeof SegmentBody>;

/** `POST /segments/preview`. */
export const PreviewBody = Type.Object({ criteria: Criteria }, { additionalProperties: false });
export type PreviewBody = Static<typeof PreviewBody>;

/**
 * Criteria as saved and answered: tags in stored form, field names as defined, field values as
 * written (a response schema: no request-only keywords).
 */
export const SavedCriteria = Type.Object({
  event: Type.Optional(
    Type.Object({
      type: Type.String(),
      withinDays: Type.Integer(),
      metadata: Type.Optional(Type.Object({ key: Type.String(), value: Type.String() })),
    }),
  ),
  tags: Type.Optional(Type.Array(Type.String())),
  fields: Type.Optional(Type.Array(Type.Object({ name: Type.String(), value: Type.Unknown() }))),
});
export type Criteria = Static<typeof SavedCriteria>;

export const Segment = Type.Object({
  id: Type.String(),
  name: Type.String(),
  criteria: SavedCriteria,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Segment = Static<typeof Segment>;

export const SegmentList = Type.Object({ items: Type.Array(Segment) });
export type SegmentList = Static<typeof SegmentList>;

/** `POST /segments/preview`: how many contacts match, and the first page of them. */
export const SegmentPreview = Type.Object({ count: Type.Integer(), items: Type.Array(ContactSummary) });
export type SegmentPreview = Static<typeof SegmentPreview>;

/** `GET /segments/:id/contacts`: the count and one page of the contacts. */
export const SegmentContacts = Type.Object({ count: Type.Integer(), items: Type.Array(ContactSummary), nextCursor: NextCursor });
export type SegmentContacts = Static<typeof SegmentContacts>;
