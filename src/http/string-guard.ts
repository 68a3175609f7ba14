import type { FastifyRequest } from 'fastify';
import { type AppError, invalid } from '../errors.js';

/**
 * Strings no request may carry, in any member or key, query or path parameter, of the API and
 * the admin API (decisions.md, Public API). A 400 Validation Error names the member.
 * - U+0000: PostgreSQL cannot store it in text (it answered 500); SQLite would keep it; no name,
 *   address, id or tag needs it.
 * - A lone surrogate (`"\ud800"` is valid JSON): not a character at all. Both drivers would store
 *   U+FFFD in its place, so what was read back would differ from what was written, and libraries
 *   such as the email validator throw on it (it answered 500).
 */
export function refuseUnstorableStrings(request: FastifyRequest, checkBody = true): void {
  for (const source of checkBody ? [request.params, request.query, request.body] : [request.params, request.query]) {
    const error = unstorableStringError(source);
    if (error) throw error;
  }
}

/** The 400 for a value holding an unstorable string somewhere (undefined when none does): a batch checks each item with it. */
export function unstorableStringError(value: unknown): AppError | undefined {
  if (!holdsUnstorable(value)) return undefined;
  const found = findUnstorable(value);
  return found === undefined ? undefined : invalid(found.path || '/', found.message);
}

const NUL = 'must not contain the NUL character (U+0000)';
const LONE_SURROGATE = 'must be well-formed Unicode (it contains a lone surrogate)';

// With the u flag a surrogate pair is one code point; only a lone surrogate is in Cs.
const LONE_SURROGATE_CHAR = /\p{Cs}/u;

const problemOf = (text: string): string | undefined =>
  text.includes('\u0000') ? NUL : LONE_SURROGATE_CHAR.test(text) ? LONE_SURROGATE : undefined;

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Whether any string (value or object key) cannot be stored: the walk of findUnstorable without
 * building a pointer per member, since nearly every request holds none (the pointer is only
 * worked out for the one that does).
 */
function holdsUnstorable(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      if (problemOf(item)) return true;
    } else if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) stack.push(item[i]);
    } else if (item !== null && typeof item === 'object') {
      for (const key of Object.keys(item)) {
        if (problemOf(key)) return true;
        stack.push((item as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/**
 * The JSON pointer of the first string (value or object key) that cannot be stored, and why.
 * Walks with a stack of its own, never by recursion, so no depth of nesting can exhaust the
 * call stack.
 */
export function findUnstorable(value: unknown): { path: string; message: string } | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      const message = problemOf(item);
      if (message) return { path, message };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path}/${i}`]);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!;
        const memberPath = `${path}/${escapePointer(key)}`;
        const message = problemOf(key);
        if (message) return { path: memberPath, message };
        stack.push([member, memberPath]);
      }
    }
  }
  return undefined;
}
