import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { seedSendParents, withDatabase } from './migration-db.js';

/**
 * 0012 lets a send outlive its contact (docs/decisions.md, Erasing a contact): the rows stay,
 * the other constraints of sends stay (the campaign, one pending send per contact and
 * campaign, the webhook deliveries that point at a send), and down puts the contact key back.
 */
test('0012 keeps every send and constraint but the contact key, and down restores it', async () => {
  await withDatabase(async (db, schema) => {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, migrationTableSchema: schema });
    assert.equal((await migrator.migrateTo('0011_bounces')).error, undefined);
    await sql`pragma foreign_keys = on`.execute(db).catch(() => undefined); // SQLite only; PostgreSQL always checks
    await seedSendParents(db);
    const insertSend = (id: string, contact: string, status: string) =>
      sql`insert into sends (id, account_id, campaign_id, contact_id, status, channel, due_at, attempts, created_at, updated_at, bounced_at)
        values (${id}, 'acc_1', 'cmp_1', ${contact}, ${status}, 'email', 5, 0, 7, 9, 11)`.execute(db);
    await insertSend('snd_1', 'ld_1', 'pending');
    await assert.rejects(insertSend('snd_x', 'nobody', 'sent'), 'before 0012 a send names an existing contact');

    assert.equal((await migrator.migrateTo('0012_erasable_contacts')).error, undefined);
    const { rows } = await sql<Record<string, unknown>>`select * from sends`.execute(db);
    assert.deepEqual(
      rows.map((r) => [
        r.id,
        r.contact_id,
        r.status,
        Number(r.due_at),
        Number(r.updated_at),
        Number(r.bounced_at),
        r.test === 0 ? 0 : Number(r.test),
      ]),
      [['snd_1', 'ld_1', 'pending', 5, 9, 11, 0]],
    );
    await insertSend('snd_2', 'erased', 'sent');
    await assert.rejects(insertSend('snd_3', 'ld_1', 'pending'), 'still one pending send per contact and campaign');
    await assert.rejects(
      sql`insert into sends (id, account_id, campaign_id, contact_id, status, channel, due_at, attempts, created_at, updated_at)
        values ('snd_4', 'acc_1', 'no_campaign', 'ld_1', 'sent', 'email', 0, 0, 0, 0)`.execute(db),
      'a send still names an existing campaign',
    );
    await assert.rejects(
      sql`insert into webhook_deliveries (id, account_id, campaign_id, send_id, position, url, payload, status, attempts, next_attempt_at, created_at, updated_at)
        values ('whd_1', 'acc_1', 'cmp_1', 'no_send', 0, 'u', '{}', 'pending', 0, 0, 0, 0)`.execute(db),
      'a webhook delivery still names an existing send',
    );

    await sql`delete from sends where id = 'snd_2'`.execute(db);
    assert.equal((await migrator.migrateTo('0011_bounces')).error, undefined);
    await assert.rejects(insertSend('snd_5', 'nobody', 'sent'), 'down puts the contact key back');
    assert.equal((await sql`select id from sends`.execute(db)).rows.length, 1);
  });
});
