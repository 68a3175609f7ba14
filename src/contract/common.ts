import { type Static, type TLiteral, type TSchema, type TUnion, Type } from 'typebox';

/**
 * Schema pieces shared by the admin API's resources. Imports only TypeBox: the panel imports
 * the types of src/contract/ (type imports, erased from its bundle).
 */

/** A choice among the values of a constant list (contract/constants.ts): `{type: 'string', enum}`, typed as their union. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

/** `:id` of a route: any non-empty id; an unknown one (or another account's) is that resource's 404. */
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });
export type IdParams = Static<typeof IdParams>;

/**
 * A whole number in a query string. Query values arrive as text and nothing is coerced, so the
 * schema takes text and the route reads it with wholeQuery (src/http/query.ts), which names the
 * allowed range in its message.
 */
export const QueryNumber = Type.String({ maxLength: 16 });

/** `true` / `false` in a query string, read with boolQuery (src/http/query.ts). */
export const QueryBoolean = Type.String({ maxLength: 16 });

/** The opaque keyset cursor of a page (src/http/paging.ts). */
export const Cursor = Type.String({ maxLength: 1024 });

/** `?limit=&cursor=` of a keyset-paged list. */
export const PageQuery = Type.Object({ limit: Type.Optional(QueryNumber), cursor: Type.Optional(Cursor) }, { additionalProperties: false });

/** `nextCursor` of a page: null on the last one. */
export const NextCursor = Type.Union([Type.String(), Type.Null()]);

/** A timestamp of the admin API: ISO 8601 UTC with milliseconds. */
export const Timestamp = Type.String({ format: 'date-time' });

/** A free-form JSON value (metadata, custom field values, payloads): serialized as it is. */
export const AnyJson = Type.Unknown();

/**
 * A JSON object of free-form members (metadata, custom field values by name). Written as
 * `additionalProperties` rather than a Record: the serializer keeps every member this way,
 * whatever its name (a Record's `^.*$` pattern misses names with a line break).
 */
export const JsonObject = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });

/** A JSON object whose members are all numbers (totals by id). */
export const NumberMap = Type.Unsafe<Record<string, number>>({ type: 'object', additionalProperties: { type: 'number' } });

/** The body of a 204. */
export const NoContent = Type.Null();

/**
 * Annotation of a schema whose validation failure answers with this exact message instead of
 * ajv's, e.g. a choice field keeps the message its service check has always given ("channel
 * must be email or whatsapp"). The error handler reads it (src/http/error-handler.ts); the app's
 * ajv knows it as a keyword.
 */
export const ERROR_MESSAGE = 'x-error-message';

/** One of `values` (a JSON Schema `enum`); a wrong value is refused with `message`. */
export function Choice<const T extends readonly string[]>(values: T, message?: string) {
  return Type.Enum(values as unknown as T[number][], message === undefined ? {} : { [ERROR_MESSAGE]: message });
}

/** A member that may be null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A timestamp as the admin API writes it (the same as Timestamp). */
export const Instant = Timestamp;

/** A choice among the constants of contract/constants.ts, as a real enum of the schema. */
export const OneOf = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<[TLiteral<T>]>;
