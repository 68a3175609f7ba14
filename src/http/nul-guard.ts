import type { FastifyRequest } from 'fastify';
import { type AppError, invalid } from '../errors.js';

/**
 * U+0000 is refused in every string of a request to the API (body members and keys, query and
 * path parameters): PostgreSQL cannot store it in text (it answered 500), SQLite would keep it,
 * and no name, address, id or tag needs it. A 400 Validation Error names the member.
 */
export async function refuseNulCharacters(request: FastifyRequest, checkBody = true): Promise<void> {
  for (const source of checkBody ? [request.params, request.query, request.body] : [request.params, request.query]) {
    const error = nulError(source);
    if (error) throw error;
  }
}

/** The 400 for a value holding U+0000 somewhere (undefined when none does): a batch checks each item with it. */
export function nulError(value: unknown): AppError | undefined {
  const path = findNul(value);
  return path === undefined ? undefined : invalid(path || '/', 'must not contain the NUL character (U+0000)');
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON pointer of the first string (value or object key) holding U+0000. Walks with a stack
 * of its own, never by recursion, so no depth of nesting can exhaust the call stack.
 */
export function findNul(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return path;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path}/${i}`]);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!;
        const memberPath = `${path}/${escapePointer(key)}`;
        if (key.includes('\u0000')) return memberPath;
        stack.push([member, memberPath]);
      }
    }
  }
  return undefined;
}
