import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { withDatabase } from './migration-db.js';

/**
 * 0015 rewrites saved segment criteria of the form before groups into one group, and its
 * `down` turns them back (deleting what the old form cannot say). Runs on the engine of
 * DATABASE_URL, in a schema of its own on PostgreSQL.
 */
test('0015 turns old criteria into one group, and back', async () => {
  await withDatabase(async (db, schema) => {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, migrationTableSchema: schema });
    const before = Object.keys(MIGRATIONS).filter((name) => name < '0015');
    assert.equal((await migrator.migrateTo(before.at(-1)!)).error, undefined);
    await sql`insert into accounts (id, name, plan, created_at) values ('acc_1', 'A', 'free', 0)`.execute(db);
    const old = {
      seg_event: { event: { type: 'purchase', withinDays: 30, metadata: { key: 'plan', value: 'pro' } }, tags: ['vip'] },
      seg_fields: { fields: [{ name: 'City', value: 'Paris' }] },
      seg_empty: {},
    };
    for (const [id, criteria] of Object.entries(old))
      await db
        .insertInto('segments')
        .values({ id, account_id: 'acc_1', name: id, criteria: JSON.stringify(criteria), created_at: 0, updated_at: 0 })
        .execute();

    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const saved = async () =>
      Object.fromEntries(
        (await db.selectFrom('segments').select(['id', 'criteria']).orderBy('id').execute()).map((r) => [r.id, JSON.parse(r.criteria)]),
      );
    assert.deepEqual(await saved(), {
      seg_empty: { groups: [{}] },
      seg_event: { groups: [{ events: [old.seg_event.event], tags: ['vip'] }] },
      seg_fields: { groups: [{ fields: [{ name: 'City', value: 'Paris' }] }] },
    });

    // A segment only the new form can say: two groups.
    await db
      .insertInto('segments')
      .values({ id: 'seg_or', account_id: 'acc_1', name: 'or', criteria: '{"groups":[{},{}]}', created_at: 0, updated_at: 0 })
      .execute();
    // Down to the migration before 0015 (later ones go down first).
    assert.equal((await migrator.migrateTo(before.at(-1)!)).error, undefined);
    assert.deepEqual(await saved(), old);
  });
});
