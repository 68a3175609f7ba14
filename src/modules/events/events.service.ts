import { chunksOf } from '../../chunks.js';
import type { Db } from '../../db/connect.js';
import type { ItemOutcome } from '../../db/item-transactions.js';
import { inOneRoundTrip } from '../../db/pipeline.js';
import { inTransaction, type Tx } from '../../db/transaction.js';
import { inWriteUnit } from '../../db/write-unit.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { checkMetadataSize } from '../../json-limits.js';
import { iso, parseDateTime } from '../../time.js';
import { contactIdSelectByIdOrTracker, findContactIdsByIdOrTracker } from '../contacts/contacts.service.js';
import { IdempotencyKeyTaken, type IdempotentBatch, type IdempotentRequest, oncePerKey } from '../idempotency/idempotency.service.js';
import { insertEventForContact, insertEvents, insertEventsQuery } from './events.repo.js';
import type { EventInput, EventView } from './events.schemas.js';

/**
 * `POST /api/events`: the Event section of the spec and decisions.md, checks in their order.
 * The contact look-up and the insert are one statement (applyEvent): one round trip on
 * PostgreSQL, where it runs alone (autocommit, no transaction: a single statement is atomic).
 * With an Idempotency-Key the answer is stored in the event's transaction (oncePerKey).
 */
export async function recordEvent(
  db: Db,
  accountId: string,
  input: EventInput,
  now = Date.now(),
  key?: IdempotentRequest,
): Promise<EventView> {
  const occurredAt = checkEvent(input, now);
  // inWriteUnit: on SQLite still one transaction, though the single statement would commit by
  // itself: events arriving together then share one commit (one fsync) with each other and with
  // other writes. With a key, a transaction on both engines (the answer commits with the event).
  return inWriteUnit(db, (q) => oncePerKey(q, key, () => applyEvent(q, accountId, input, occurredAt)), { transaction: key !== undefined });
}

/**
 * `POST /api/events/batch`: each item with recordEvent's checks, in the same order, and the
 * same rows. Validate, then write: the checks that need no database come first, then one
 * look-up names every item's contact (404 Lead not found for those it does not find), and the
 * events of all the other items are inserted a hundred rows a statement, all or none (one
 * transaction; on PostgreSQL without a key, one pipeline after the look-up).
 * An item that fails was refused before anything was written. Events take no lock and change
 * no row, so one transaction for the batch is safe on PostgreSQL too. One outcome per item.
 */
export async function recordEvents(
  db: Db,
  accountId: string,
  inputs: readonly EventInput[],
  keyed?: IdempotentBatch<ItemOutcome<EventView>[]>,
): Promise<ItemOutcome<EventView>[]> {
  const outcomes: ItemOutcome<EventView>[] = new Array(inputs.length);
  const checked: number[] = [];
  const occurredAt: number[] = new Array(inputs.length);
  const now = Date.now();
  inputs.forEach((input, i) => {
    try {
      occurredAt[i] = checkEvent(input, now);
      checked.push(i);
    } catch (error) {
      outcomes[i] = { ok: false, error };
    }
  });
  if (checked.length === 0) return outcomes;
  try {
    // Every checked item's contact in one look-up: the rows to insert, and each item's outcome.
    const resolve = async (q: Tx): Promise<EventRow[]> => {
      const contactIds = await findContactIdsByIdOrTracker(
        q,
        accountId,
        checked.map((i) => leadOf(inputs[i]!)),
      );
      const rows: EventRow[] = [];
      checked.forEach((i, j) => {
        const contactId = contactIds[j];
        if (contactId === undefined) {
          outcomes[i] = { ok: false, error: new AppError('LEAD_NOT_FOUND') };
          return;
        }
        const row = eventRow(inputs[i]!, contactId, occurredAt[i]!);
        rows.push(row);
        outcomes[i] = { ok: true, value: eventView(row) };
      });
      return rows;
    };
    if (db.engine === 'postgres' && !keyed) {
      // The look-up on its own (one statement for the ids named, one for the trackers, per 500),
      // then every insert in one pipeline, whose implicit transaction keeps all of them or none
      // (db/pipeline.ts): two round trips for a batch naming up to 500 contacts one way.
      const rows = await resolve(db.kysely);
      if (rows.length > 0)
        await inOneRoundTrip(
          db,
          chunksOf(rows, ROWS_PER_INSERT).map((chunk) => insertEventsQuery(db.kysely, accountId, chunk)),
        );
    } else {
      const write = async (tx: Tx) => {
        for (const chunk of chunksOf(await resolve(tx), ROWS_PER_INSERT)) await insertEvents(tx, accountId, chunk);
        return outcomes;
      };
      // With an Idempotency-Key the answer (all items' outcomes) is stored in the same transaction.
      await inTransaction(db, (tx) => (keyed ? oncePerKey(tx, keyed.request, () => write(tx), keyed.answer) : write(tx)));
    }
  } catch (error) {
    // A key already used: the HTTP layer answers for it (replay, 409 or 422).
    if (error instanceof IdempotencyKeyTaken) throw error;
    // The write failed as a whole (the database, not an item): none of its events was kept, and
    // an item the look-up never answered failed with it.
    for (const i of checked) if (outcomes[i] === undefined || outcomes[i].ok) outcomes[i] = { ok: false, error };
  }
  return outcomes;
}

/** Rows per multi-row insert: 7 values each, far below both engines' limits on bound parameters. */
const ROWS_PER_INSERT = 100;

/** The checks that need no database, before any write, in decisions.md's order. Returns when the event happened. */
function checkEvent(input: EventInput, now: number): number {
  if (input.type === 'click' && (input.value === undefined || String(input.value) === '')) {
    throw invalid('/value', 'value is required when type is click');
  }
  if (input.metadata) checkMetadataSize(input.metadata, '/metadata');
  const occurredAt = input.timestamp === undefined ? now : checkTimestamp(input.timestamp, now);
  if (input.leadId === undefined && input.tracker === undefined) throw new AppError('LEAD_OR_TRACKER_REQUIRED');
  return occurredAt;
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

/** leadId wins over tracker. */
const leadOf = (input: EventInput) => (input.leadId !== undefined ? { id: input.leadId } : { tracker: input.tracker! });

type EventRow = Parameters<typeof insertEvents>[2][number];
/** An event's row before its contact is known. */
type EventFields = Omit<EventRow, 'contact_id'>;

const eventRow = (input: EventInput, contactId: string, occurredAt: number): EventRow => ({
  ...eventFields(input, occurredAt),
  contact_id: contactId,
});

function eventFields(input: EventInput, occurredAt: number): EventFields {
  return {
    id: newId('ev'),
    type: input.type,
    value: input.value === undefined ? null : String(input.value),
    metadata: JSON.stringify(input.metadata ?? {}),
    url: input.url === undefined ? null : normalizeEventUrl(input.url),
    created_at: occurredAt,
  };
}

const eventView = (row: EventRow): EventView => ({ id: row.id, leadId: row.contact_id, type: row.type, createdAt: iso(row.created_at) });

/** Looks the contact up and inserts the event in one statement; nothing inserted: 404 Lead not found. */
async function applyEvent(q: Tx, accountId: string, input: EventInput, occurredAt: number): Promise<EventView> {
  const event = eventFields(input, occurredAt);
  const contactId = await insertEventForContact(q, accountId, event, leadOf(input), contactIdSelectByIdOrTracker);
  if (contactId === undefined) throw new AppError('LEAD_NOT_FOUND');
  return eventView({ ...event, contact_id: contactId });
}

/** The spec stores a page without its `https://` prefix and without anything from `?` on. */
export function normalizeEventUrl(url: string): string {
  return url
    .trim()
    .replace(/^https?:\/\//i, '')
    .split('?')[0]!;
}
