import type { Db } from '../../db/connect.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { checkMetadataSize } from '../../json-limits.js';
import { iso, parseDateTime } from '../../time.js';
import { findContactIdByIdOrTracker } from '../contacts/contacts.service.js';
import { type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import { insertEvent } from './events.repo.js';
import type { EventInput, EventView } from './events.schemas.js';

/**
 * `POST /api/events`: the Event section of the spec and decisions.md, checks in their order.
 * With an Idempotency-Key the answer is stored in the event's transaction (oncePerKey).
 */
export async function recordEvent(
  db: Db,
  accountId: string,
  input: EventInput,
  now = Date.now(),
  key?: IdempotentRequest,
): Promise<EventView> {
  const value = input.value === undefined ? null : String(input.value);
  if (input.type === 'click' && (value === null || value === '')) throw invalid('/value', 'value is required when type is click');
  if (input.metadata) checkMetadataSize(input.metadata, '/metadata');
  const occurredAt = input.timestamp === undefined ? now : checkTimestamp(input.timestamp, now);
  if (input.leadId === undefined && input.tracker === undefined) throw new AppError('LEAD_OR_TRACKER_REQUIRED');

  // One transaction, though a single insert would commit by itself: on SQLite, events arriving
  // together then share one commit (one fsync) with each other and with other writes.
  return inTransaction(db, (tx) =>
    oncePerKey(tx, key, async () => {
      const contactId = await findContactIdByIdOrTracker(
        tx,
        accountId,
        input.leadId !== undefined ? { id: input.leadId } : { tracker: input.tracker! },
      );
      if (!contactId) throw new AppError('LEAD_NOT_FOUND');

      const event = {
        id: newId('ev'),
        contact_id: contactId,
        type: input.type,
        value,
        metadata: JSON.stringify(input.metadata ?? {}),
        url: input.url === undefined ? null : normalizeEventUrl(input.url),
        created_at: occurredAt,
      };
      await insertEvent(tx, accountId, event);
      return { id: event.id, leadId: contactId, type: event.type, createdAt: iso(occurredAt) };
    }),
  );
}

/** How far a sent `timestamp` may lie ahead of this server's clock (the sender's clock may run a little fast). */
export const MAX_TIMESTAMP_SKEW_MS = 5 * 60_000;
/** How far back a sent `timestamp` may lie: history older than a year is not an event worth backfilling. */
export const MAX_TIMESTAMP_AGE_DAYS = 365;
const DAY_MS = 24 * 60 * 60_000;

/** The event's time from its `timestamp` (decisions.md, Events): a date-time with a zone, within the bounds. */
function checkTimestamp(text: string, now: number): number {
  const at = parseDateTime(text);
  if (at === undefined) {
    throw invalid(
      '/timestamp',
      'must be an ISO 8601 date and time with a time zone, e.g. 2026-11-25T10:15:30Z or 2026-11-25T11:15:30+01:00',
    );
  }
  if (at > now + MAX_TIMESTAMP_SKEW_MS)
    throw invalid('/timestamp', `must not be more than ${MAX_TIMESTAMP_SKEW_MS / 60_000} minutes in the future`);
  if (at < now - MAX_TIMESTAMP_AGE_DAYS * DAY_MS)
    throw invalid('/timestamp', `must not be more than ${MAX_TIMESTAMP_AGE_DAYS} days in the past`);
  return at;
}

/** The spec stores a page without its `https://` prefix and without anything from `?` on. */
export function normalizeEventUrl(url: string): string {
  return url
    .trim()
    .replace(/^https?:\/\//i, '')
    .split('?')[0]!;
}
