import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { withDatabase } from './migration-db.js';

/**
 * 0007 turns the double KPI totals into micros: exact ones keep their 6 decimal places, the
 * float noise is rounded away, totals already out of range (Infinity on SQLite) stay at the
 * range's end. Runs on the engine of DATABASE_URL, in a schema of its own on PostgreSQL.
 */
test('0007 converts stored KPI totals to micros', async () => {
  await withDatabase(async (db, schema) => {
    // Kysely looks for its own tables by schema: without it, it would find those of the shared test database.
    const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, migrationTableSchema: schema });
    assert.equal((await migrator.migrateTo('0006_admin_indexes')).error, undefined);
    await sql`insert into accounts (id, name, plan, created_at) values ('acc_1', 'A', 'free', 0)`.execute(db);
    await sql`insert into contacts (id, account_id, name, archived, opted_out, metadata, created_at, updated_at) values ('ld_1', 'acc_1', 'C', 0, 0, '{}', 0, 0)`.execute(
      db,
    );
    const legacy: [string, number][] = [
      ['noisy', 0.1 + 0.2],
      ['twenty', 20.000000000000014],
      ['negative', -5.5],
      ['huge', 1.7e308],
      ['tiny', 4e-7],
    ];
    for (const [kpiId, value] of legacy) {
      await sql`insert into contact_kpis (account_id, contact_id, kpi_id, value) values ('acc_1', 'ld_1', ${kpiId}, ${value})`.execute(db);
    }
    // An infinite total, as SQLite stored 1.7e308 added twice (PostgreSQL refused it).
    await sql`update contact_kpis set value = value * 10 where kpi_id = 'huge'`.execute(db).catch(() => undefined);

    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const rows = await db.selectFrom('contact_kpis').select(['kpi_id', 'value_micros']).orderBy('kpi_id').execute();
    assert.deepEqual(
      rows.map((r) => [r.kpi_id, Number(r.value_micros)]),
      [
        ['huge', 999999999999999],
        ['negative', -5500000],
        ['noisy', 300000],
        ['tiny', 0],
        ['twenty', 20000000],
      ],
    );
  });
});
