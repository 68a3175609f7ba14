import { sql } from 'kysely';

export const DAY_MS = 86_400_000;

/**
 * The UTC day number of an epoch-milliseconds column: integer division, the same on SQLite
 * (integer operands) and PostgreSQL (bigint). A literal, not a parameter, so the SELECT and
 * GROUP BY expressions are textually the same, as PostgreSQL requires.
 */
export function utcDayOf(column: string) {
  return sql<number>`${sql.ref(column)} / ${sql.lit(DAY_MS)}`;
}
