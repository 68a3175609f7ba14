import { type Static, Type } from 'typebox';
import { Cursor, IdParams, NextCursor, QueryNumber, StringEnum, Timestamp } from '../common.js';
import { CHANNELS } from '../constants.js';

/** The admin API's built-in outbox (docs/admin-api.md, Outbox): request and response schemas. */

export { IdParams as OutboxIdParams };

/** `GET /outbox`: optionally one campaign's messages; `limit` 1–200. */
export const OutboxListQuery = Type.Object(
  { campaignId: Type.Optional(Type.String({ maxLength: 255 })), limit: Type.Optional(QueryNumber), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
export type OutboxListQuery = Static<typeof OutboxListQuery>;

const members = {
  id: Type.String(),
  sendId: Type.String(),
  campaignId: Type.String(),
  channel: StringEnum(CHANNELS),
  to: Type.String(),
  from: Type.Union([Type.String(), Type.Null()]),
  subject: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
};

/** One message of the outbox list (without its bodies). */
export const OutboxItem = Type.Object(members);
export type OutboxItem = Static<typeof OutboxItem>;

export const OutboxPage = Type.Object({ items: Type.Array(OutboxItem), nextCursor: NextCursor });
export type OutboxPage = Static<typeof OutboxPage>;

/** `GET /outbox/:id`: one message in full; `html` untracked (no open pixel, original links). */
export const OutboxMessage = Type.Object({
  ...members,
  html: Type.Union([Type.String(), Type.Null()]),
  text: Type.Union([Type.String(), Type.Null()]),
  /** Email headers (Message-ID, List-Unsubscribe ...); `{}` for WhatsApp. */
  headers: Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: true }),
  /** WhatsApp: the Cloud API request body; null for email. */
  payload: Type.Unknown(),
});
export type OutboxMessage = Static<typeof OutboxMessage>;

/** `GET /message-frame`: an empty HTML document served with the message frame's policy. */
export const MessageFrameDocument = Type.String({ description: 'text/html' });
