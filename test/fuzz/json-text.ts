import fc from 'fast-check';

/**
 * Generated values nest up to this deep: past the 32-level limit of docs/decisions.md, so the
 * refusal of deeper values is exercised as well as their acceptance below it.
 */
export const MAX_GENERATED_DEPTH = 40;

/**
 * A JSON document as a tree, written out as raw text by `toJsonText`, so the generator can say
 * what JSON.stringify cannot: duplicate keys, `-0`, `1e309`, numbers beyond double precision.
 */
export type JsonTree =
  | { kind: 'raw'; text: string } // a number token, true, false or null, written as is
  | { kind: 'str'; value: string }
  | { kind: 'arr'; items: JsonTree[] }
  | { kind: 'obj'; entries: [string, JsonTree][] };

export const raw = (text: string): JsonTree => ({ kind: 'raw', text });
export const str = (value: string): JsonTree => ({ kind: 'str', value });
export const arr = (items: JsonTree[]): JsonTree => ({ kind: 'arr', items });
export const obj = (entries: [string, JsonTree][]): JsonTree => ({ kind: 'obj', entries });

/** Any JS value (as JSON.stringify reads it) as a tree. */
export function fromValue(value: unknown): JsonTree {
  if (typeof value === 'string') return str(value);
  if (Array.isArray(value)) return arr(value.map(fromValue));
  if (value !== null && typeof value === 'object') return obj(Object.entries(value).map(([k, v]) => [k, fromValue(v)]));
  return raw(JSON.stringify(value ?? null));
}

export function toJsonText(tree: JsonTree): string {
  switch (tree.kind) {
    case 'raw':
      return tree.text;
    case 'str':
      return JSON.stringify(tree.value);
    case 'arr':
      return `[${tree.items.map(toJsonText).join(',')}]`;
    case 'obj':
      return `{${tree.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  }
}

/** Member names of the public and admin API (and a few that no route knows), so objects hit real members. */
export const MEMBER_NAMES = [
  'id',
  'email',
  'phone',
  'name',
  'tags',
  'tagsRemove',
  'fields',
  'kpis',
  'metadata',
  'note',
  'text',
  'createdBy',
  'tracker',
  'type',
  'leadId',
  'value',
  'url',
  'campaignId',
  'lead',
  'key',
  'password',
  'role',
  'scopes',
  'active',
  'expiresAt',
  'whatsapp',
  'phoneNumberId',
  'token',
  'appSecret',
  'channel',
  'schedule',
  'mode',
  'delaySeconds',
  'reentry',
  'cooldownDays',
  'from',
  'subject',
  'html',
  'whatsappTemplate',
  'language',
  'whatsappParams',
  'webhooks',
  'criteria',
  'event',
  'withinDays',
  'archived',
  'optedOut',
  'contactId',
  'to',
  'q',
  'tag',
  'limit',
  'cursor',
  'days',
  'before',
  'status',
  'api-key',
  'nmae',
];
/** Keys that poison prototypes when a parser or merge is careless. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__'];

/** Number tokens at the edges: overflow to Infinity, negative zero, underflow, more digits than a double holds. */
export const ODD_NUMBERS = [
  '0',
  '-0',
  '-0.0',
  '1',
  '-1',
  '0.1',
  '1e309',
  '-1e309',
  '1e-400',
  '1.7e308',
  '-1.7e308',
  '4.9e-324',
  '1E2',
  '1e+2',
  '9007199254740993',
  '123456789012345678901234567890',
  '0.30000000000000004',
  '2147483648',
  '-2147483649',
  '1.5',
];

export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0000@example.com',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'true',
  '0',
  '-0',
  '1e309',
  'NaN',
  'Infinity',
  '\ud800',
  'x\udfffy',
  '\ufeff',
  '\u202e',
  'Ω≈ç√∫',
  '😀👍🏽',
  'ﷺ',
  '\u0301',
  'İ',
  'ß',
  '\r\n',
  '\t',
  '<script>alert(1)</script>',
  '{{ contact.name }}',
  '{% raw %}',
  "' OR 1=1 --",
  '%00',
  '../..',
  '/',
  'a'.repeat(256),
  `hk_${'a'.repeat(40)}`,
  '+33612345678',
  '+1',
  '00',
  'user@example.com',
  'USER@EXAMPLE.COM ',
  'x@y',
  '2026-02-30',
  '31/12/2026',
  '12,5',
  '12.5',
  'ld_0000000000',
  'cmp_0000000000',
  'https://example.com/a?b=c',
  'http://[::1]/',
];

const stringArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(...MEMBER_NAMES, ...PROTO_KEYS) },
  // Huge, but well under the 1 MiB body limit (a body over it is defect 6's business).
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 200_000 }).map((n) => 'x'.repeat(n)) },
);

const numberArb = fc.oneof(
  fc.constantFrom(...ODD_NUMBERS),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.integer().map(String),
);

export const leafArb: fc.Arbitrary<JsonTree> = fc.oneof(
  { weight: 4, arbitrary: stringArb.map(str) },
  { weight: 3, arbitrary: numberArb.map(raw) },
  { weight: 2, arbitrary: fc.constantFrom('true', 'false', 'null').map(raw) },
);

// Prototype keys are rarer than members: the JSON parser refuses a whole body for `__proto__`,
// and bodies must also get past it to reach the handlers.
export const keyArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...MEMBER_NAMES) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) },
  { weight: 1, arbitrary: stringArb },
);

/** A JSON value nested up to `depth` levels, objects with duplicate and prototype keys. */
export function jsonTreeArb(depth: number): fc.Arbitrary<JsonTree> {
  if (depth <= 0) return leafArb;
  const inner = jsonTreeArb(depth - 1);
  return fc.oneof(
    { weight: 5, arbitrary: leafArb },
    { weight: 1, arbitrary: fc.array(inner, { maxLength: 5 }).map(arr) },
    { weight: 2, arbitrary: fc.array(fc.tuple(keyArb, inner), { maxLength: 5 }).map(obj) },
  );
}

/** A value wrapped in objects and lists, 1 to MAX_GENERATED_DEPTH levels deep. */
export const deepArb: fc.Arbitrary<JsonTree> = fc
  .tuple(fc.array(fc.oneof(fc.constant(null), keyArb), { minLength: 1, maxLength: MAX_GENERATED_DEPTH - 1 }), leafArb)
  .map(([wraps, leaf]) => wraps.reduceRight<JsonTree>((inner, key) => (key === null ? arr([inner]) : obj([[key, inner]])), leaf));

export const anyValueArb: fc.Arbitrary<JsonTree> = fc.oneof({ weight: 5, arbitrary: jsonTreeArb(3) }, { weight: 1, arbitrary: deepArb });
