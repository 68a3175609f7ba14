import type { Kysely } from 'kysely';

/**
 * Segment conditions on a custom field or a KPI read "the contacts of this account whose value
 * of this field (KPI) meets the test" as one uncorrelated sub-select (segment-criteria.repo.ts):
 * these indexes give it the account's rows of that field or KPI alone, instead of a scan of
 * every account's values (the tables' keys start with the contact). KPI totals are in the
 * index, so a comparison is a range read of it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('contact_field_values_account_field')
    .on('contact_field_values')
    .columns(['account_id', 'field_id', 'contact_id'])
    .execute();
  await db.schema
    .createIndex('contact_kpis_account_kpi')
    .on('contact_kpis')
    .columns(['account_id', 'kpi_id', 'value_micros', 'contact_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('contact_kpis_account_kpi').execute();
  await db.schema.dropIndex('contact_field_values_account_field').execute();
}
