import { Type, type TSchema } from 'typebox';

/**
 * Schema pieces shared by the admin contracts (src/contract/admin/*). Server side only at run
 * time: the panel imports types from the contracts, never values.
 */

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

/** `:id` of a resource. */
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });

/** A member that may be null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A timestamp of the admin API: ISO 8601 UTC with milliseconds. */
export const Timestamp = Type.String({ format: 'date-time' });
