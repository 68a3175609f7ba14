import { type Kysely, sql } from 'kysely';

/**
 * KPI totals become fixed-point integers in millionths (decisions.md, Limits): a double summed
 * 0.1 two hundred times into 20.000000000000014, overflowed to Infinity on SQLite and failed
 * with "value out of range" on PostgreSQL. The range is ±999,999,999.999999, so every total
 * is an integer below 2^53 that both engines add exactly.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('contact_kpis')
    .addColumn('value_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  // Totals already past the range (Infinity on SQLite) are kept at the range's end.
  await sql`update contact_kpis set value_micros = case
      when value >= 999999999.999999 then 999999999999999
      when value <= -999999999.999999 then -999999999999999
      else cast(round(value * 1000000) as bigint) end`.execute(db);
  await db.schema.alterTable('contact_kpis').dropColumn('value').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('contact_kpis')
    .addColumn('value', 'double precision', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update contact_kpis set value = value_micros / 1000000.0`.execute(db);
  await db.schema.alterTable('contact_kpis').dropColumn('value_micros').execute();
}
