import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import type { WebhookDeliveriesTable } from '../../src/db/schema.js';
import { claimDue } from '../../src/webhooks/deliveries.repo.js';
import { insertSend, makeEmailCampaign, makeTenant } from '../helpers/factories.js';
import { startService, type TestService } from '../helpers/harness.js';
import { rowsRead } from '../helpers/rows-read.js';

/**
 * The webhook queue's claim (deliveries.repo.ts, claimDue): due deliveries and expired leases,
 * earliest due first, ties in creation order, at most its limit; each kind read in that order
 * from the index (migration 0025), so a backlog of any size costs a claim the same. A database
 * of its own and no worker: every delivery in the queue is this file's.
 */
let t: TestService;
before(async () => {
  t = await startService({ role: 'api', ownDatabase: true });
});
after(() => t.close());

type Delivery = Pick<WebhookDeliveriesTable, 'id' | 'status' | 'next_attempt_at' | 'lease_until'>;

async function insertDeliveries(deliveries: Delivery[]): Promise<void> {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const { id: sendId } = await insertSend(t.db, tenant.accountId, campaignId, { status: 'sent' });
  await t.db.kysely
    .insertInto('webhook_deliveries')
    .values(
      deliveries.map((d, position) => ({
        ...d,
        account_id: tenant.accountId,
        campaign_id: campaignId,
        send_id: sendId,
        position,
        url: 'https://hooks.example.com/herald',
        payload: '{}',
        attempts: d.status === 'delivering' ? 1 : 0,
        last_status_code: null,
        last_error: null,
        created_at: 0,
        updated_at: 0,
      })),
    )
    .execute();
}

const ids = (claimed: { id: string }[]) => claimed.map((d) => d.id);

test('a claim takes due deliveries and expired leases, earliest due first, ties in creation order, at most its limit', async () => {
  const now = Date.now();
  await insertDeliveries([
    { id: 'wd_order_a', status: 'pending', next_attempt_at: now - 30, lease_until: null },
    { id: 'wd_order_c', status: 'pending', next_attempt_at: now - 50, lease_until: null },
    { id: 'wd_order_b', status: 'pending', next_attempt_at: now - 50, lease_until: null },
    { id: 'wd_order_d', status: 'delivering', next_attempt_at: now - 40, lease_until: now - 1 },
    { id: 'wd_order_e', status: 'pending', next_attempt_at: now + 60_000, lease_until: null },
    { id: 'wd_order_f', status: 'delivering', next_attempt_at: now - 60, lease_until: now + 60_000 },
  ]);
  // The answer's order is the update's: compare sets; the limit cuts through the tie.
  assert.deepEqual(ids(await claimDue(t.db, now, 60_000, 1)), ['wd_order_b']);
  assert.deepEqual(ids(await claimDue(t.db, now, 60_000, 2)).sort(), ['wd_order_c', 'wd_order_d']);
  const last = await claimDue(t.db, now, 60_000, 10);
  assert.deepEqual(ids(last), ['wd_order_a'], 'not due and leased ones left');
  assert.equal(last[0]!.attempts, 1);
  assert.deepEqual(await claimDue(t.db, now, 60_000, 10), [], 'a claimed delivery is not claimed again');
});

test('PostgreSQL: a claim reads a few times its limit of deliveries, whatever the backlog of due ones', async (c) => {
  if (!process.env.DATABASE_URL) return c.skip('PostgreSQL only (read from the table statistics)');
  const now = Date.now();
  await insertDeliveries([{ id: 'wd_backlog_0', status: 'pending', next_attempt_at: now - 1000, lease_until: null }]);
  const backlog = 400;
  // The backlog among many delivered rows, as in a table in use: the planner then reads by index.
  const copies = (status: string, from: number, count: number) =>
    sql`insert into webhook_deliveries (id, account_id, campaign_id, send_id, position, url, payload, status, attempts,
        next_attempt_at, created_at, updated_at)
      select 'wd_backlog_' || n, account_id, campaign_id, send_id, n, url, payload, ${status}, 0, next_attempt_at, 0, 0
        from webhook_deliveries cross join generate_series(${sql.lit(from)}, ${sql.lit(from + count - 1)}) n
       where id = 'wd_backlog_0'`.execute(t.db.kysely);
  await copies('delivered', 1, 20_000);
  await copies('pending', 20_001, backlog);
  const read = await rowsRead(t.config, 'webhook_deliveries', async (db) => {
    assert.equal((await claimDue(db, now, 60_000, 2)).length, 2);
  });
  // Each kind at most its limit, and the picked rows again for their update: a few times the
  // limit (9 rows measured), not the backlog.
  assert.ok(read <= 20, `${read} rows of webhook_deliveries read by one claim with ${backlog} due`);
});
