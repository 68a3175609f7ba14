import type { Db } from '../../db/connect.js';
import { applyEach, type ItemOutcome } from '../../db/item-transactions.js';
import { inTransaction, type Tx } from '../../db/transaction.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { checkMetadataSize } from '../../json-limits.js';
import { iso } from '../../time.js';
import { findContactIdByIdOrTracker } from '../contacts/contacts.service.js';
import { insertEvent } from './events.repo.js';
import type { EventInput, EventView } from './events.schemas.js';

/** `POST /api/events`: the Event section of the spec and decisions.md, checks in their order. */
export async function recordEvent(db: Db, accountId: string, input: EventInput, now = Date.now()): Promise<EventView> {
  checkEvent(input);
  // One transaction, though a single insert would commit by itself: on SQLite, events arriving
  // together then share one commit (one fsync) with each other and with other writes.
  return inTransaction(db, (tx) => applyEvent(tx, accountId, input, now));
}

/**
 * `POST /api/events/batch`: each item exactly as `recordEvent` (same checks, same order), in
 * as few transactions as the engine allows (db/item-transactions.ts); one outcome per item.
 */
export async function recordEvents(db: Db, accountId: string, inputs: readonly EventInput[]): Promise<ItemOutcome<EventView>[]> {
  return applyEach(db, inputs, (tx, input) => {
    checkEvent(input);
    return applyEvent(tx, accountId, input, Date.now());
  });
}

/** The checks that need no database, before any write. */
function checkEvent(input: EventInput): void {
  if (input.type === 'click' && (input.value === undefined || String(input.value) === '')) {
    throw invalid('/value', 'value is required when type is click');
  }
  if (input.metadata) checkMetadataSize(input.metadata, '/metadata');
  if (input.leadId === undefined && input.tracker === undefined) throw new AppError('LEAD_OR_TRACKER_REQUIRED');
}

async function applyEvent(tx: Tx, accountId: string, input: EventInput, now: number): Promise<EventView> {
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
    value: input.value === undefined ? null : String(input.value),
    metadata: JSON.stringify(input.metadata ?? {}),
    url: input.url === undefined ? null : normalizeEventUrl(input.url),
    created_at: now,
  };
  await insertEvent(tx, accountId, event);
  return { id: event.id, leadId: contactId, type: event.type, createdAt: iso(now) };
}

/** The spec stores a page without its `https://` prefix and without anything from `?` on. */
export function normalizeEventUrl(url: string): string {
  return url
    .trim()
    .replace(/^https?:\/\//i, '')
    .split('?')[0]!;
}
