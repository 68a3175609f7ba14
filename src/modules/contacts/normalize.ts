import { parsePhoneNumberFromString } from 'libphonenumber-js';
import validator from 'validator';
import { memoUpTo } from '../../lru.js';

/**
 * The stored forms of contact identifiers and tags (decisions.md, Contacts). Pure functions:
 * the write path, the `lead` string lookup and `contact show` must agree on them exactly,
 * or a contact written one way could not be found the other.
 */

/** Longest stored tag, name, field key (decisions.md, Limits the spec leaves open). */
export const MAX_NAME_LENGTH = 255;

/**
 * The validator's verdict per address already judged. `isEmail` costs about 6 µs (its byte
 * lengths through encodeURI, the domain split and tested label by label), the largest cost of a
 * lead write outside the statements; a known contact's address comes back on every update and
 * trigger. A pure function, so the cache changes no answer (memoUpTo: forgets all when full).
 */
const EMAIL_VERDICTS = 10_000;
const verdicts = new Map<string, boolean>();
/** The validator refuses longer addresses at once (its own limit): they are not kept. */
const LONGEST_EMAIL = 254;

/** Trimmed and lowercased, or undefined when the validator refuses it. */
export function normalizeEmail(raw: string): string | undefined {
  const email = raw.trim().toLowerCase();
  if (email.length > LONGEST_EMAIL) return validator.isEmail(email) ? email : undefined;
  return memoUpTo(verdicts, EMAIL_VERDICTS, email, () => validator.isEmail(email)) ? email : undefined;
}

// Separators people write inside phone numbers; anything else left over makes it invalid.
const PHONE_SEPARATORS = /[\s.\-()[\]]/g;
const PHONE_SHAPE = /^\+?\d{1,20}$/;

/**
 * E.164 (`+` and digits), or undefined. A leading `+` or digits only with the country code
 * first; the number must be possible for its country (libphonenumber-js decides: length
 * rules of the country's plan), as decisions.md says.
 */
export function normalizePhone(raw: string): string | undefined {
  const compact = raw.replace(PHONE_SEPARATORS, '');
  if (!PHONE_SHAPE.test(compact)) return undefined;
  const parsed = parsePhoneNumberFromString(compact.startsWith('+') ? compact : `+${compact}`);
  return parsed?.isPossible() ? parsed.number : undefined;
}

// NFD splits an accented letter into the letter and combining marks, which are then dropped.
const COMBINING_MARKS = /\p{M}/gu;
const WHITE_SPACE_RUN = /\s+/g;

/** `"  Black  Friday "` and `"black friday"` both become `black-friday`; may return "". */
export function normalizeTag(raw: string): string {
  return raw.toLowerCase().normalize('NFD').replace(COMBINING_MARKS, '').trim().replace(WHITE_SPACE_RUN, '-');
}

/** RFC 6901 escaping, so a KPI id containing `/` or `~` still gives a usable warning path. */
export function pointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
