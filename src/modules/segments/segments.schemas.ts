import { Type, type Static } from 'typebox';
import { MAX_JSON_DEPTH } from '../../json-limits.js';

/** decisions.md: segments look back at most 90 days (events are kept at least that long). */
export const MAX_WITHIN_DAYS = 90;
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
            Type.Object({ key: Type.String({ minLength: 1, maxLength: 255 }), value: Type.String({ maxLength: 10_000 }) }, { additionalProperties: false }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: MAX_PARTS })),
    fields: Type.Optional(
      Type.Array(
        Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), value: Type.Unknown({ maxDepth: MAX_JSON_DEPTH }) }, { additionalProperties: false }),
        { maxItems: MAX_PARTS },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CriteriaInput = Static<typeof Criteria>;

export const SegmentBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), criteria: Criteria }, { additionalProperties: false });
export type SegmentInput = Static<typeof SegmentBody>;

export const PreviewBody = Type.Object({ criteria: Criteria }, { additionalProperties: false });

export const SegmentItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  criteria: Type.Unknown(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type SegmentView = Static<typeof SegmentItem>;
