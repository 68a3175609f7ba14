import { Type, type TLiteral, type TSchema, type TUnion } from 'typebox';

/** Shared pieces of the admin API's schemas. */

/** `:id` of a resource route. */
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });

/** The body of a 204 answer: none. */
export const NoContent = Type.Null();

/** A timestamp as the admin API writes it: ISO 8601, UTC. */
export const Instant = Type.String({ format: 'date-time' });

/** The value or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A choice among the constants of contract/constants.ts, as a real enum of the schema. */
export const OneOf = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<[TLiteral<T>]>;
