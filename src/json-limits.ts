import { MAX_JSON_DEPTH } from './contract/constants.js';
import { invalid } from './errors.js';

export { MAX_JSON_DEPTH };

/** Free-form metadata is capped (decisions.md, Limits): 16 KiB of JSON. */
export const METADATA_MAX_BYTES = 16 * 1024;

/** A trigger's `data` object (issue 10) is capped like contact metadata: 16 KiB of JSON. */
export const TRIGGER_DATA_MAX_BYTES = METADATA_MAX_BYTES;

/** 400 at `path` when the trigger data is over its limit; the message is worded as contact metadata's. */
export function checkTriggerDataSize(data: object, path: string): void {
  if (Buffer.byteLength(JSON.stringify(data), 'utf8') > TRIGGER_DATA_MAX_BYTES) {
    throw invalid(path, `must be at most ${TRIGGER_DATA_MAX_BYTES / 1024} KiB (as JSON)`);
  }
}

export function checkMetadataSize(metadata: object, path: string): void {
  if (Buffer.byteLength(JSON.stringify(metadata)) > METADATA_MAX_BYTES) {
    throw invalid(path, `metadata must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
  }
}

/**
 * Free-form values (metadata, custom field values) nest at most this many levels of objects
 * and arrays, the value's own object or array being level 1 (decisions.md, Limits).
 * `JSON.stringify`, Liquid and the response serializer all recurse: a value a few thousand
 * levels deep exhausts the stack (a 500, or a send that can never render). The limit,
 * MAX_JSON_DEPTH, is part of the contract (contract/constants.ts).
 */

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

/** A container met by the walk, linked to its parent so a pointer is only built when needed. */
interface Visit {
  value: Container;
  depth: number;
  parent?: Visit;
  key?: string;
}

/**
 * Walks the containers of `value` down to `maxDepth + 1` levels without recursion (the walk
 * itself must not be what exhausts the stack), calling `onTooDeep` for each container found
 * below `maxDepth`, in document order, until it returns true.
 */
function walk(value: unknown, maxDepth: number, onTooDeep: (visit: Visit) => boolean): void {
  if (!isContainer(value)) return;
  const stack: Visit[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    if (visit.depth > maxDepth) {
      if (onTooDeep(visit)) return;
      continue;
    }
    const entries: [string, unknown][] = Array.isArray(visit.value)
      ? visit.value.map((v, i) => [String(i), v])
      : Object.entries(visit.value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (isContainer(child)) stack.push({ value: child, depth: visit.depth + 1, parent: visit, key });
    }
  }
}

const pointerOf = (visit: Visit): string => {
  const keys: string[] = [];
  for (let v: Visit | undefined = visit; v?.key !== undefined; v = v.parent) keys.push(v.key.replaceAll('~', '~0').replaceAll('/', '~1'));
  return keys
    .reverse()
    .map((k) => `/${k}`)
    .join('');
};

/** The JSON pointer (relative to `value`) of the first container nested deeper than `maxDepth`; undefined when none is. */
export function tooDeepAt(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  let at: string | undefined;
  walk(value, maxDepth, (visit) => {
    at = pointerOf(visit);
    return true;
  });
  return at;
}

/**
 * The ajv keyword `maxDepth` (levels of objects and arrays, the member itself being level 1),
 * put on every free-form member of a request schema: a deeper value is a 400 Validation Error
 * naming the first container too deep, before anything recursive touches it.
 */
export function maxDepthKeyword<A extends KeywordHost>(ajv: A): A {
  const validate: KeywordValidate = (maxDepth: number, data: unknown, _parent?: unknown, cxt?: { instancePath: string }) => {
    const at = tooDeepAt(data, maxDepth);
    if (at === undefined) return true;
    validate.errors = [
      {
        keyword: 'maxDepth',
        instancePath: `${cxt?.instancePath ?? ''}${at}`,
        params: { limit: maxDepth },
        message: `is nested too deeply: at most ${maxDepth} levels of objects and arrays`,
      },
    ];
    return false;
  };
  ajv.addKeyword({ keyword: 'maxDepth', schemaType: 'number', errors: true, validate });
  return ajv;
}

/** The part of ajv this module uses (ajv is Fastify's, not a dependency of ours). */
// biome-ignore lint/suspicious/noExplicitAny: ajv's own signature
type KeywordValidate = ((maxDepth: any, data: any, parent?: any, cxt?: any) => boolean) & { errors?: object[] };
interface KeywordHost {
  addKeyword(definition: { keyword: string; schemaType: 'number'; errors: boolean; validate: KeywordValidate }): unknown;
}

/**
 * Parses JSON this service stored, cutting anything nested deeper than the limit (containers
 * below it become null). Values stored before the limit existed may be thousands of levels
 * deep; read through here, they can never break a render, a webhook or a response.
 * `wrappers`: how many levels of our own the free-form value sits under in the document.
 */
export function parseStoredJson<T = unknown>(text: string, wrappers = 0): T {
  // JSON.parse itself does not recurse (V8 parses iteratively); everything after it might.
  const value = JSON.parse(text) as unknown;
  walk(value, MAX_JSON_DEPTH + wrappers, (visit) => {
    const parent = visit.parent!.value as Record<string, unknown>;
    parent[visit.key!] = null;
    return false;
  });
  return value as T;
}
