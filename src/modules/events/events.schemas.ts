import { type Static, Type } from 'typebox';
import { MAX_JSON_DEPTH } from '../../json-limits.js';

export const EventBody = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 255, description: 'Free-form label, compared exactly (case included).' }),
    leadId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Contact id. Wins over tracker.' })),
    tracker: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Visitor id already linked to a contact.' })),
    value: Type.Optional(
      Type.Union([Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean()], {
        description: 'Stored as text (a number or boolean becomes its text). Required when type is click.',
      }),
    ),
    metadata: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          maxDepth: MAX_JSON_DEPTH,
          description: 'Free-form details (16 KiB at most, 32 levels deep at most).',
        },
      ),
    ),
    url: Type.Optional(Type.String({ maxLength: 2048, description: 'Stored without http(s):// and without anything from ? on.' })),
    timestamp: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'When the event happened, to backfill history: ISO 8601 with a time zone (`2026-11-25T10:15:30Z`, ' +
          '`2026-11-25T11:15:30.250+01:00`), at most 5 minutes ahead of the server clock and at most 365 days back. ' +
          'Default: when the call is received. The activity feed and segment criteria date the event by it.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EventInput = Static<typeof EventBody>;

export const EventResponse = Type.Object({
  id: Type.String(),
  leadId: Type.String(),
  type: Type.String(),
  createdAt: Type.String({
    format: 'date-time',
    description: 'When the event happened: `timestamp` when sent, else when it was received.',
  }),
});
export type EventView = Static<typeof EventResponse>;
