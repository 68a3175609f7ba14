import type { Db } from '../../../db/connect.js';
import { AppError, invalid } from '../../../errors.js';
import { newId } from '../../../ids.js';
import { iso } from '../../../time.js';
import { listActivity, type ActivityItem } from '../../activity/activity.service.js';
import { ContactsRepo } from '../../contacts/contacts.repo.js';
import { getContactProfile, setContactFlags, type ContactProfile } from '../../contacts/contacts.service.js';
import { MAX_NOTE_TEXT } from '../../contacts/lead-input.js';

/** The `herald contact show` profile, or 404 Lead not found (another account's id included). */
export async function contactProfile(db: Db, accountId: string, contactId: string): Promise<ContactProfile> {
  const profile = await getContactProfile(db, accountId, { id: contactId });
  if (!profile) throw new AppError('LEAD_NOT_FOUND');
  return profile;
}

export async function updateContactFlags(db: Db, accountId: string, contactId: string, flags: { archived?: boolean; optedOut?: boolean }): Promise<ContactProfile> {
  await setContactFlags(db, accountId, contactId, flags);
  return contactProfile(db, accountId, contactId);
}

/**
 * A note written in the panel, signed with the user's email. Unlike a note sent through the
 * API, it is not a contact write: an archived contact stays archived.
 */
export async function addNote(db: Db, accountId: string, contactId: string, rawText: string, createdBy: string) {
  const text = rawText.trim();
  if (text === '') throw invalid('/text', 'must not be empty');
  if (text.length > MAX_NOTE_TEXT) throw invalid('/text', `must be at most ${MAX_NOTE_TEXT} characters`);
  const repo = new ContactsRepo(db.kysely);
  if ((await repo.findContactIdById(accountId, contactId)) === undefined) throw new AppError('LEAD_NOT_FOUND');
  const now = Date.now();
  await repo.insertNote(accountId, { id: newId('nt'), contactId, text, createdBy, now });
  return { text, createdBy, createdAt: iso(now) };
}

/**
 * The activity feed, with each admin panel test send marked `test: true` so the panel can
 * tell it from a real one (one query over the page's sends).
 */
export async function contactActivity(db: Db, accountId: string, contactId: string, options: { before?: number; limit?: number }) {
  const { items } = await listActivity(db, accountId, contactId, options);
  const sendIds = items.flatMap((item) => (item.kind === 'send' ? [item.sendId] : []));
  const tests = new Set<string>();
  if (sendIds.length > 0) {
    const rows = await db.kysely.selectFrom('sends').select('id').where('account_id', '=', accountId).where('id', 'in', sendIds).where('test', '=', 1).execute();
    for (const row of rows) tests.add(row.id);
  }
  return { items: items.map((item): ActivityItem | (ActivityItem & { test: true }) => (item.kind === 'send' && tests.has(item.sendId) ? { ...item, test: true } : item)) };
}
