import type { Db } from '../../db/connect.js';
import type { ItemOutcome } from '../../db/item-transactions.js';
import { inTransaction, type Tx } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { checkMetadataSize } from '../../json-limits.js';
import { iso } from '../../time.js';
import { findContactIdByIdOrTracker, findContactIdsByIdOrTracker } from '../contacts/contacts.service.js';
import { insertEvent, insertEvents } from './events.repo.js';
import type { EventInput, EventView } from './events.schemas.js';

/** `POST /api/events`: the Event section of the spec and decisions.md, checks in their order. */
export async function recordEvent(db: Db, accountId: string, input: EventInput, now = Date.now()): Promise<EventView> {
  checkEvent(input);
  // One transaction, though a single insert would commit by itself: on SQLite, events arriving
  // together then share one commit (one fsync) with each other and with other writes.
  return inTransaction(db, (tx) => applyEvent(tx, accountId, input, now));
}

/**
 * `POST /api/events/batch`: each item with recordEvent's checks, in the same order, and the
 * same rows. Validate, then write: the checks that need no database come first, then one
 * look-up names every item's contact (404 Lead not found for those it does not find), and the
 * events of all the other items are inserted a hundred rows a statement, in one transaction.
 * An item that fails was refused before anything was written. Events take no lock and change
 * no row, so one transaction for the batch is safe on PostgreSQL too. One outcome per item.
 */
export async function recordEvents(db: Db, accountId: string, inputs: readonly EventInput[]): Promise<ItemOutcome<EventView>[]> {
  const outcomes: ItemOutcome<EventView>[] = new Array(inputs.length);
  const checked: number[] = [];
  inputs.forEach((input, i) => {
    try {
      checkEvent(input);
      checked.push(i);
    } catch (error) {
      outcomes[i] = { ok: false, error };
    }
  });
  if (checked.length === 0) return outcomes;
  const now = Date.now();
  try {
    await inTransaction(db, async (tx) => {
      const contactIds = await findContactIdsByIdOrTracker(
        tx,
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
        const row = eventRow(inputs[i]!, contactId, now);
        rows.push(row);
        outcomes[i] = { ok: true, value: eventView(row) };
      });
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await insertEvents(tx, accountId, rows.slice(i, i + ROWS_PER_INSERT));
    });
  } catch (error) {
    // The transaction failed as a whole (the database, not an item): none of its events was kept.
    for (const i of checked) if (outcomes[i]?.ok) outcomes[i] = { ok: false, error };
  }
  return outcomes;
}

/** Rows per multi-row insert: 7 values each, far below both engines' limits on bound parameters. */
const ROWS_PER_INSERT = 100;

/** The checks that need no database, before any write. */
function checkEvent(input: EventInput): void {
  if (input.type === 'click' && (input.value === undefined || String(input.value) === '')) {
    throw invalid('/value', 'value is required when type is click');
  }
  if (input.metadata) checkMetadataSize(input.metadata, '/metadata');
  if (input.leadId === undefined && input.tracker === undefined) throw new AppError('LEAD_OR_TRACKER_REQUIRED');
}

/** leadId wins over tracker. */
const leadOf = (input: EventInput) => (input.leadId !== undefined ? { id: input.leadId } : { tracker: input.tracker! });

type EventRow = Parameters<typeof insertEvent>[2];

function eventRow(input: EventInput, contactId: string, now: number): EventRow {
  return {
    id: newId('ev'),
    contact_id: contactId,
    type: input.type,
    value: input.value === undefined ? null : String(input.value),
    metadata: JSON.stringify(input.metadata ?? {}),
    url: input.url === undefined ? null : normalizeEventUrl(input.url),
    created_at: now,
  };
}

const eventView = (row: EventRow): EventView => ({ id: row.id, leadId: row.contact_id, type: row.type, createdAt: iso(row.created_at) });

async function applyEvent(tx: Tx, accountId: string, input: EventInput, now: number): Promise<EventView> {
  const contactId = await findContactIdByIdOrTracker(tx, accountId, leadOf(input));
  if (!contactId) throw new AppError('LEAD_NOT_FOUND');
  const row = eventRow(input, contactId, now);
  await insertEvent(tx, accountId, row);
  return eventView(row);
}

/** The spec stores a page without its `https://` prefix and without anything from `?` on. */
export function normalizeEventUrl(url: string): string {
  return url
    .trim()
    .replace(/^https?:\/\//i, '')
    .split('?')[0]!;
}
