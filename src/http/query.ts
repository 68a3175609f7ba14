import { invalid } from '../errors.js';

/**
 * A whole number from a query string. Query values arrive as text and nothing is coerced
 * (decisions.md), so the schemas take text and this reads it, with the range in the message.
 * An empty value (`?limit=`, as forms send) means "not given".
 */
export function wholeQuery(value: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw invalid(`/${name}`, `${name} must be a whole number from ${min} to ${max}`);
  return n;
}

/** `true` / `false` from a query string; anything else is a Validation Error naming the parameter. */
export function boolQuery(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalid(`/${name}`, `${name} must be true or false`);
}

/** Schema of a numeric query parameter: text, read by wholeQuery (which names the allowed range). */
export { QueryNumber } from '../contract/common.js';
