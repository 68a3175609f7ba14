import { AppError, type Problem } from '../../errors.js';
import type { LeadInput } from './contacts.schemas.js';
import { MAX_NAME_LENGTH, normalizeEmail, normalizePhone, normalizeTag } from './normalize.js';

/** decisions.md, Limits the spec leaves open. */
export const MAX_NOTE_TEXT = 10_000;
export const MAX_METADATA_BYTES = 16 * 1024;
const MIN_NAME_LENGTH = 2;
const INVALID_EMAIL = 'must be a valid email address';
const INVALID_PHONE = 'must be a possible phone number in international format: + (or digits only), country code, number';

/**
 * A lead body with every member in its stored form. Everything that can be decided without
 * the database is decided here, before the transaction opens, so a bad request costs no
 * query and changes nothing.
 */
export interface NormalizedLead {
  id?: string;
  email?: string;
  phone?: string;
  name?: string;
  /** Tags to add, already without those also removed (removal wins). */
  tagsAdd?: string[];
  tagsRemove?: string[];
  note?: { text: string; createdBy: string };
}

/**
 * Normalises the identifiers, name, tags and note; throws one Validation Error listing every
 * problem. `at` is the JSON pointer of the lead object in the request (`/lead` in a trigger).
 */
export function normalizeLead(input: LeadInput, at = ''): NormalizedLead {
  const problems: Problem[] = [];
  const lead: NormalizedLead = {};
  if (input.id !== undefined) lead.id = input.id;

  if (input.email !== undefined) {
    lead.email = normalizeEmail(input.email);
    if (lead.email === undefined) problems.push({ path: `${at}/email`, message: INVALID_EMAIL });
  }
  if (input.phone !== undefined) {
    lead.phone = normalizePhone(input.phone);
    if (lead.phone === undefined) {
      problems.push({ path: `${at}/phone`, message: INVALID_PHONE });
    }
  }
  if (input.name !== undefined) {
    lead.name = input.name.trim();
    if (lead.name.length < MIN_NAME_LENGTH || lead.name.length > MAX_NAME_LENGTH) {
      problems.push({ path: `${at}/name`, message: `must be ${MIN_NAME_LENGTH} to ${MAX_NAME_LENGTH} characters once trimmed` });
    }
  }

  const removed = input.tagsRemove === undefined ? undefined : normalizeTags(input.tagsRemove);
  if (removed !== undefined) lead.tagsRemove = removed;
  if (input.tags !== undefined) {
    input.tags.forEach((tag, i) => {
      if (normalizeTag(tag).length > MAX_NAME_LENGTH)
        problems.push({ path: `${at}/tags/${i}`, message: `must be at most ${MAX_NAME_LENGTH} characters` });
    });
    const removedSet = new Set(removed);
    lead.tagsAdd = normalizeTags(input.tags).filter((tag) => !removedSet.has(tag));
  }

  if (input.note !== undefined) {
    const text = input.note.text.trim();
    const createdBy = input.note.createdBy.trim();
    if (text === '') problems.push({ path: `${at}/note/text`, message: 'must not be empty' });
    else if (text.length > MAX_NOTE_TEXT)
      problems.push({ path: `${at}/note/text`, message: `must be at most ${MAX_NOTE_TEXT} characters` });
    if (createdBy === '') problems.push({ path: `${at}/note/createdBy`, message: 'must not be empty' });
    else if (createdBy.length > MAX_NAME_LENGTH)
      problems.push({ path: `${at}/note/createdBy`, message: `must be at most ${MAX_NAME_LENGTH} characters` });
    lead.note = { text, createdBy };
  }

  // The stored object is checked again after the merge; checking the sent part first refuses
  // an oversized body before any query.
  if (input.metadata !== undefined && metadataBytes(input.metadata) > MAX_METADATA_BYTES) problems.push(metadataTooLarge(at));

  if (problems.length > 0) throw new AppError('VALIDATION', { details: problems });
  return lead;
}

/** Stored forms, empty results dropped, each once, in the order sent. */
export function normalizeTags(raw: string[]): string[] {
  const tags = new Set<string>();
  for (const tag of raw) {
    const stored = normalizeTag(tag);
    if (stored !== '') tags.add(stored);
  }
  return [...tags];
}

export function metadataBytes(metadata: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify(metadata), 'utf8');
}

export function metadataTooLarge(at = ''): Problem {
  return {
    path: `${at}/metadata`,
    message: `must be at most ${MAX_METADATA_BYTES / 1024} KiB once merged with the stored metadata (as JSON)`,
  };
}

/**
 * `GET /api/leads?email=|phone=`: exactly one address, in the stored form the write path gives it
 * (so a contact written one way is found the other); one Validation Error otherwise.
 */
export function normalizeAddressLookup(query: { email?: string; phone?: string }): { email: string } | { phone: string } {
  if (query.email !== undefined && query.phone !== undefined) {
    throw new AppError('VALIDATION', { details: [{ path: '/phone', message: 'give an email or a phone, not both' }] });
  }
  if (query.email !== undefined) {
    const email = normalizeEmail(query.email);
    if (email === undefined) throw new AppError('VALIDATION', { details: [{ path: '/email', message: INVALID_EMAIL }] });
    return { email };
  }
  if (query.phone !== undefined) {
    const phone = normalizePhone(query.phone);
    if (phone === undefined) throw new AppError('VALIDATION', { details: [{ path: '/phone', message: INVALID_PHONE }] });
    return { phone };
  }
  throw new AppError('VALIDATION', { details: [{ path: '/email', message: 'an email or a phone is required (one of them)' }] });
}
