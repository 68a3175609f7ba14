import { type Static, Type } from 'typebox';
import { IdParams, NextCursor, NoContent, PageQuery, Timestamp } from '../common.js';
import { MAX_JSON_DEPTH, MAX_SEGMENT_GROUPS, MAX_WITHIN_DAYS } from '../constants.js';
import { ContactSummary } from './contacts.js';

/** The admin API's saved segments (docs/admin-api.md, Segments): request and response schemas. */

export { IdParams as SegmentIdParams, NoContent as SegmentDeleted, PageQuery as SegmentContactsQuery };

const MAX_PARTS = 20;

/** How a field or KPI value is compared; `between` is inclusive at both ends and needs `to`. */
export const COMPARISONS = ['eq', 'gt', 'gte', 'lt', 'lte', 'between'] as const;
export type Comparison = (typeof COMPARISONS)[number];
const Op = Type.Union(
  [Type.Literal('eq'), Type.Literal('gt'), Type.Literal('gte'), Type.Literal('lt'), Type.Literal('lte'), Type.Literal('between')],
  { description: 'eq (default for fields), gt, gte, lt, lte, or between (inclusive, with `to`)' },
);
const FreeValue = Type.Unknown({ maxDepth: MAX_JSON_DEPTH });

/**
 * An event condition: an event of `type` (exact text, case included) in the last `withinDays`
 * days, optionally with one metadata member equal to `value` as text; `negated`: no such event.
 */
const EventCondition = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 255 }),
    withinDays: Type.Integer({ minimum: 1, maximum: MAX_WITHIN_DAYS }),
    metadata: Type.Optional(
      Type.Object(
        { key: Type.String({ minLength: 1, maxLength: 255 }), value: Type.String({ maxLength: 10_000 }) },
        { additionalProperties: false },
      ),
    ),
    negated: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** A custom field condition: gt/gte/lt/lte/between on Number and Date fields only. */
const FieldCondition = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    op: Type.Optional(Op),
    value: FreeValue,
    to: Type.Optional(FreeValue),
  },
  { additionalProperties: false },
);

/** A KPI condition on the contact's total (0 when nothing was ever added). */
const KpiCondition = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 255 }),
    op: Op,
    value: FreeValue,
    to: Type.Optional(FreeValue),
  },
  { additionalProperties: false },
);

/** One group: every condition given must hold (AND); an empty group holds for every contact. */
const Group = Type.Object(
  {
    events: Type.Optional(Type.Array(EventCondition, { maxItems: MAX_PARTS })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: MAX_PARTS })),
    fields: Type.Optional(Type.Array(FieldCondition, { maxItems: MAX_PARTS })),
    kpis: Type.Optional(Type.Array(KpiCondition, { maxItems: MAX_PARTS })),
  },
  { additionalProperties: false },
);

/**
 * A segment's criteria: a contact matches when ANY of `groups` holds (OR of ANDs). The form
 * of segments saved before groups, one group with at most one event (`event`, `tags`,
 * `fields` at the top), is still accepted, without `groups`, and saved as one group.
 */
export const Criteria = Type.Object(
  {
    groups: Type.Optional(Type.Array(Group, { minItems: 1, maxItems: MAX_SEGMENT_GROUPS })),
    event: Type.Optional(EventCondition),
    tags: Group.properties.tags,
    fields: Group.properties.fields,
  },
  { additionalProperties: false },
);
export type CriteriaInput = Static<typeof Criteria>;
export type GroupInput = Static<typeof Group>;

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
 * Criteria as saved and answered: tags in stored form, field names as defined, field and KPI
 * values as written, `op` left out for a field's `eq` (a response schema: no request-only keywords).
 */
const SavedValues = { value: Type.Unknown(), to: Type.Optional(Type.Unknown()) };
export const SavedGroup = Type.Object({
  events: Type.Optional(
    Type.Array(
      Type.Object({
        type: Type.String(),
        withinDays: Type.Integer(),
        metadata: Type.Optional(Type.Object({ key: Type.String(), value: Type.String() })),
        negated: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
  tags: Type.Optional(Type.Array(Type.String())),
  fields: Type.Optional(Type.Array(Type.Object({ name: Type.String(), op: Type.Optional(Op), ...SavedValues }))),
  kpis: Type.Optional(Type.Array(Type.Object({ id: Type.String(), op: Op, ...SavedValues }))),
});
export type Group = Static<typeof SavedGroup>;
export const SavedCriteria = Type.Object({ groups: Type.Array(SavedGroup) });
export type Criteria = Static<typeof SavedCriteria>;

export const Segment = Type.Object({
  id: Type.String(),
  name: Type.String(),
  criteria: SavedCriteria,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Segment = Static<typeof Segment>;

/** A segment in the list, with how many contacts it selected at `countedAt` (within the last minute). */
export const SegmentListItem = Type.Object({ ...Segment.properties, count: Type.Integer(), countedAt: Timestamp });
export type SegmentListItem = Static<typeof SegmentListItem>;
export const SegmentList = Type.Object({ items: Type.Array(SegmentListItem) });
export type SegmentList = Static<typeof SegmentList>;

/** `POST /segments/preview`: how many contacts match, and the first page of them. */
export const SegmentPreview = Type.Object({ count: Type.Integer(), items: Type.Array(ContactSummary) });
export type SegmentPreview = Static<typeof SegmentPreview>;

/** `GET /segments/:id/contacts`: the count and one page of the contacts. */
export const SegmentContacts = Type.Object({ count: Type.Integer(), items: Type.Array(ContactSummary), nextCursor: NextCursor });
export type SegmentContacts = Static<typeof SegmentContacts>;
