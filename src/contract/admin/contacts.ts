import { type Static, Type } from 'typebox';
import { Cursor, IdParams, JsonObject, NextCursor, NumberMap, QueryBoolean, QueryNumber, StringEnum, Timestamp } from '../common.js';
import { MAX_JSON_DEPTH, SEND_STATUSES } from '../constants.js';

/** The admin API's contacts (docs/admin-api.md, Contacts): request and response schemas. */

export { IdParams as ContactIdParams };

/** `GET /contacts`: the filters; `archived` and `optedOut` are `true`/`false`, `limit` 1–200. */
export const ContactListQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 255 })),
    tag: Type.Optional(Type.String({ maxLength: 255 })),
    archived: Type.Optional(QueryBoolean),
    optedOut: Type.Optional(QueryBoolean),
    limit: Type.Optional(QueryNumber),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type ContactListQuery = Static<typeof ContactListQuery>;

/** One row of a contact list (the contact search, a segment's contacts). */
export const ContactSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** The primary (first stored) address; null when there is none. */
  email: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  archived: Type.Boolean(),
  optedOut: Type.Boolean(),
  createdAt: Timestamp,
});
export type ContactSummary = Static<typeof ContactSummary>;

export const ContactPage = Type.Object({ items: Type.Array(ContactSummary), nextCursor: NextCursor });
export type ContactPage = Static<typeof ContactPage>;

export const Note = Type.Object({ text: Type.String(), createdBy: Type.String(), createdAt: Timestamp });
export type Note = Static<typeof Note>;

/** `GET /contacts/:id`: the `herald contact show` profile. */
/** An address of the contact that bounced: sends to it end in error until an administrator lifts it. */
export const Suppression = Type.Object({
  channel: Type.Union([Type.Literal('email'), Type.Literal('whatsapp')]),
  address: Type.String(),
  /** The refusal, e.g. `smtp 550: 5.1.1 No such user`. */
  reason: Type.String(),
  createdAt: Timestamp,
});
export type Suppression = Static<typeof Suppression>;

export const ContactProfile = Type.Object({
  id: Type.String(),
  name: Type.String(),
  emails: Type.Array(Type.String()),
  phones: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  /** Custom field values by field name, in their stored form. */
  fields: JsonObject,
  /** KPI totals by KPI id. */
  kpis: NumberMap,
  metadata: JsonObject,
  notes: Type.Array(Note),
  trackers: Type.Array(Type.String()),
  archived: Type.Boolean(),
  optedOut: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ContactProfile = Static<typeof ContactProfile>;

/** The contact page's profile: `herald contact show`'s, with the addresses that bounced. */
export const AdminContactProfile = Type.Object({ ...ContactProfile.properties, suppressed: Type.Array(Suppression) });
export type AdminContactProfile = Static<typeof AdminContactProfile>;

/** `POST /contacts/:id/suppressions/lift`: one of the contact's own addresses. */
export const LiftSuppressionBody = Type.Object({ address: Type.String({ minLength: 1, maxLength: 320 }) }, { additionalProperties: false });
export type LiftSuppressionBody = Static<typeof LiftSuppressionBody>;

/** `PATCH /contacts/:id`: the flags only operators change. */
export const ContactFlagsBody = Type.Object(
  { archived: Type.Optional(Type.Boolean()), optedOut: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type ContactFlagsBody = Static<typeof ContactFlagsBody>;

/**
 * `POST /contacts/:id/edit`: name, tags, custom fields and KPI increments, read exactly as
 * `POST /api/leads` reads them; what the API would skip with a warning is refused here (400,
 * each problem at its member), so the panel shows it on the field and nothing changes.
 */
export const ContactEditBody = Type.Object(
  {
    name: Type.Optional(Type.String()),
    tags: Type.Optional(Type.Array(Type.String())),
    tagsRemove: Type.Optional(Type.Array(Type.String())),
    fields: Type.Optional(
      Type.Array(
        Type.Object(
          { key: Type.String({ maxLength: 255 }), value: Type.Unknown({ maxDepth: MAX_JSON_DEPTH }) },
          { additionalProperties: false },
        ),
      ),
    ),
    kpis: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type ContactEditBody = Static<typeof ContactEditBody>;

/** `DELETE /contacts/:id` (administrators): what the erase removed, counted (docs/decisions.md, Erasing a contact). */
export const ContactErased = Type.Object({
  id: Type.String(),
  /** Sends kept as anonymous rows for the statistics. */
  sendsAnonymized: Type.Number(),
  /** Pending or queued sends cancelled so nothing goes out. */
  sendsCancelled: Type.Number(),
  events: Type.Number(),
});
export type ContactErased = Static<typeof ContactErased>;

/** `POST /contacts/:id/notes`: trimmed, 1–10,000 characters (checked by the service, with that message). */
export const NoteBody = Type.Object({ text: Type.String() }, { additionalProperties: false });
export type NoteBody = Static<typeof NoteBody>;

/** `GET /contacts/:id/activity`: `before` an ISO timestamp or a date, `limit` 1–500 (100 by default). */
export const ActivityQuery = Type.Object(
  { before: Type.Optional(Type.String({ maxLength: 64 })), limit: Type.Optional(QueryNumber) },
  { additionalProperties: false },
);
export type ActivityQuery = Static<typeof ActivityQuery>;

const EventActivity = Type.Object({
  kind: Type.Literal('event'),
  at: Timestamp,
  id: Type.String(),
  type: Type.String(),
  value: Type.Union([Type.String(), Type.Null()]),
  metadata: JsonObject,
  url: Type.Union([Type.String(), Type.Null()]),
});
const NoteActivity = Type.Object({ kind: Type.Literal('note'), at: Timestamp, text: Type.String(), createdBy: Type.String() });
const SendActivity = Type.Object({
  kind: Type.Literal('send'),
  at: Timestamp,
  sendId: Type.String(),
  campaignId: Type.String(),
  status: StringEnum(SEND_STATUSES),
  /** Present (true) on an admin panel test send. */
  test: Type.Optional(Type.Literal(true)),
});
const OpenActivity = Type.Object({ kind: Type.Literal('open'), at: Timestamp, sendId: Type.String(), campaignId: Type.String() });
/** The contact opted out through this send's unsubscribe link. */
const UnsubscribeActivity = Type.Object({
  kind: Type.Literal('unsubscribe'),
  at: Timestamp,
  sendId: Type.String(),
  campaignId: Type.String(),
});
const ClickActivity = Type.Object({
  kind: Type.Literal('click'),
  at: Timestamp,
  sendId: Type.String(),
  campaignId: Type.String(),
  url: Type.String(),
});

/** One entry of a contact's activity feed (events, notes, sends, opens, clicks). */
export const ActivityItem = Type.Union([EventActivity, NoteActivity, SendActivity, OpenActivity, ClickActivity, UnsubscribeActivity]);
export type ActivityItem = Static<typeof ActivityItem>;

export const ActivityPage = Type.Object({ items: Type.Array(ActivityItem) });
export type ActivityPage = Static<typeof ActivityPage>;
