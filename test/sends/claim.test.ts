import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { claimBatch } from '../../src/dispatcher/dispatch-claim.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, uniq } from '../helpers/factories.js';
import { makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * The claim takes at most its limit, each due send once. On PostgreSQL a plain
 * `IN (… LIMIT n FOR UPDATE SKIP LOCKED)` can be re-run per row by a semi-join plan and claim
 * every due send at once; this test fails on that plan. The process serves the API only, so no
 * dispatcher claims anything behind the test's back.
 */
let t: TestHerald;
before(async () => {
  t = await startTestHerald({}, { role: 'api' });
});
after(() => t.close());

test('a claim takes at most its limit, oldest due first, and never the same send twice', async () => {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const api = apiClient(t.app, tenant.key);
  const mine: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: `${uniq('claim')}@example.com`, name: 'Claim Test' } });
    assert.equal(r.body.status, 'queued', JSON.stringify(r.body));
    mine.push(r.body.sendId);
  }
  const now = Date.now() + 1000;
  // Other test files on a shared database may have left due sends: they count toward the total.
  const { count } = await t.db.kysely
    .selectFrom('sends')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where((eb) =>
      eb.or([
        eb.and([eb('status', 'in', ['pending', 'queued']), eb('due_at', '<=', now)]),
        // A send another file left claimed whose lease ran out is claimed again (its attempts then go up).
        eb.and([eb('status', '=', 'sending'), eb('lease_until', '<=', now)]),
      ]),
    )
    .executeTakeFirstOrThrow();
  let left = Number(count);
  assert.ok(left >= 5);

  const claimed: string[] = [];
  while (left > 0) {
    const rows = await claimBatch(t.db, now, 60_000, 2).then((batch) => batch.sends);
    assert.equal(rows.length, Math.min(2, left), 'exactly the limit while more are due');
    for (const row of rows) {
      if (mine.includes(row.id)) assert.equal(row.attempts, 1);
      claimed.push(row.id);
    }
    left -= rows.length;
  }
  assert.deepEqual(
    await claimBatch(t.db, now, 60_000, 2).then((batch) => batch.sends),
    [],
    'nothing left: a claimed send is not claimed again',
  );
  assert.equal(new Set(claimed).size, claimed.length);
  const myOrder = claimed.filter((id) => mine.includes(id));
  assert.deepEqual(myOrder, mine, 'in due order');
});

test('SQLite: a claim whose due-time reads fail claims nothing (the claim and its reads are one transaction)', async (c) => {
  if (t.db.engine !== 'sqlite') return c.skip('PostgreSQL claims and reads in one statement, which fails whole');
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const api = apiClient(t.app, tenant.key);
  const r = await api.post('/api/campaigns/trigger', { campaignId, lead: { email: `${uniq('claim')}@example.com`, name: 'Claim Test' } });
  assert.equal(r.body.status, 'queued', JSON.stringify(r.body));
  const now = Date.now() + 1000;
  const row = () =>
    t.db.kysely.selectFrom('sends').select(['status', 'lease_until', 'attempts']).where('id', '=', r.body.sendId).executeTakeFirstOrThrow();
  const before = await row();

  // The suppression list is read after the claim statement, in the same job: hide it and the read fails.
  await t.db.kysely.schema.alterTable('suppressed_addresses').renameTo('suppressed_addresses_hidden').execute();
  try {
    await assert.rejects(claimBatch(t.db, now, 60_000, 10), /no such table: suppressed_addresses/);
  } finally {
    await t.db.kysely.schema.alterTable('suppressed_addresses_hidden').renameTo('suppressed_addresses').execute();
  }
  assert.deepEqual(await row(), before, 'still waiting, unleased, its attempts unchanged');
  const batch = await claimBatch(t.db, now, 60_000, 10);
  assert.ok(
    batch.sends.some((s) => s.id === r.body.sendId),
    'claimed once the read works again',
  );
});
