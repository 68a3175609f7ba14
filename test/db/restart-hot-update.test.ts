import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { updateCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, sendRow, startTestHerald } from '../helpers/herald.js';

/**
 * PostgreSQL updates a Delay restart's send in place of its indexes (a HOT update), whichever
 * statement restarts it: the trigger decided before the read (a `lead` object, the campaign
 * seen), the usual path's (the campaign changed since it was seen) and the restart of a contact
 * named by email. A restart to a later time changes no indexed value (migration 0024); were it
 * to write `wake_at`, or any indexed column, every restart would add an entry to each of the
 * send's indexes and none would be HOT.
 *
 * Read from the table's statistics, which a server process publishes when it ends: the test's
 * service is closed before they are read.
 */
test('Delay restarts of a pending send are HOT updates on PostgreSQL', async (c) => {
  if (!process.env.DATABASE_URL) return c.skip('PostgreSQL only');
  const t = await startTestHerald({}, { role: 'api' });
  const url = t.config.databaseUrl!;
  let closed = false;
  const close = async () => {
    if (!closed) await t.close();
    closed = true;
  };
  let restarts = 0;
  try {
    const tenant = await makeTenant(t.db, t.config);
    const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 600 });
    const api = apiClient(t.app, tenant.key);
    const email = randomEmail();
    const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada Hot' } });
    assert.equal(first.body.status, 'pending', JSON.stringify(first.body));
    const sendId: string = first.body.sendId;
    const wake = Number((await sendRow(t.db, sendId)).wake_at);
    const before = await sendsUpdates(url);
    const restart = async (lead: unknown) => {
      const res = await api.post('/api/campaigns/trigger', { campaignId, lead });
      assert.deepEqual([res.body.status, res.body.sendId], ['pending', sendId], JSON.stringify(res.body));
      restarts++;
    };
    for (let i = 0; i < 8; i++) await restart({ email, tags: [`t${i}`] });
    for (let i = 0; i < 8; i++) await restart(email);
    await updateCampaign(t.db, t.config, tenant.accountId, campaignId, { delaySeconds: 900 });
    for (let i = 0; i < 4; i++) await restart({ email, tags: [`u${i}`] });
    assert.equal(Number((await sendRow(t.db, sendId)).wake_at), wake, 'every restart was to a later time');

    await close();
    const after = await eventually(
      async () => {
        const now = await sendsUpdates(url);
        return now.updates - before.updates >= restarts && now;
      },
      15_000,
      "the sends table's statistics",
    );
    const hot = after.hot - before.hot;
    // The first restart may find its page full; the later ones find the room pruning made.
    assert.ok(hot >= restarts - 2, `${hot} of ${after.updates - before.updates} updates of sends HOT, for ${restarts} restarts`);
  } finally {
    await close();
  }
});

/** Updates of `sends` so far, and how many were HOT, from a connection of its own (a fresh statistics snapshot). */
async function sendsUpdates(url: string): Promise<{ updates: number; hot: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select n_tup_upd::int as updates, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = 'sends'`,
    );
    return rows[0];
  } finally {
    await client.end();
  }
}
