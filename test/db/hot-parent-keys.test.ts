import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeEmailCampaign, makeTenant, randomEmail } from '../helpers/factories.js';

/**
 * Migration 0022 (docs/decisions.md, "No row lock on an account or campaign per write"): on
 * PostgreSQL a new contact, a stored idempotent answer and a new send no longer lock their
 * account's or campaign's row (a foreign key check's `FOR KEY SHARE`, which writes the locker
 * into the row's xmax). SQLite keeps those keys: it checks them without writing.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

/** The row's xmax: the last transaction that deleted, updated or locked this version of it. */
async function xmax(table: 'accounts' | 'campaigns', id: string): Promise<string> {
  const { rows } = await sql<{ xmax: string }>`select xmax::text as xmax from ${sql.table(table)} where id = ${id}`.execute(t.db.kysely);
  return rows[0]!.xmax;
}

test('a new contact, an idempotent answer and a send leave the account and campaign rows unlocked', async (c) => {
  if (t.db.engine !== 'postgres') return c.skip('PostgreSQL only');
  const tenant = await makeTenant(t.db, t.config);
  // A delay campaign: the send it makes is not due, so no worker of a later test file (shared database) delivers it.
  const campaign = await makeEmailCampaign(t, tenant.accountId, { mode: 'delay', delaySeconds: 3600 });
  const before = { account: await xmax('accounts', tenant.accountId), campaign: await xmax('campaigns', campaign.id) };

  const api = apiClient(t.app, tenant.key);
  const created = await api.post('/api/leads', { email: randomEmail(), name: 'New Lead', tags: ['a'] }, { 'idempotency-key': 'k1' });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const triggered = await api.post('/api/campaigns/trigger', {
    campaignId: campaign.id,
    lead: { email: randomEmail(), name: 'Other Lead' },
  });
  assert.equal(triggered.status, 200, JSON.stringify(triggered.body));

  // An update would leave a new version with xmax 0; a key check's lock names its transaction.
  const after = { account: await xmax('accounts', tenant.accountId), campaign: await xmax('campaigns', campaign.id) };
  assert.ok([before.account, '0'].includes(after.account), `account row locked by ${after.account} (was ${before.account})`);
  assert.ok([before.campaign, '0'].includes(after.campaign), `campaign row locked by ${after.campaign} (was ${before.campaign})`);
});

test('SQLite keeps the keys of contacts, idempotent answers and sends', async (c) => {
  if (t.db.engine !== 'sqlite') return c.skip('SQLite only');
  for (const [table, parent] of [
    ['contacts', 'accounts'],
    ['idempotency_keys', 'accounts'],
    ['sends', 'campaigns'],
  ] as const) {
    const { rows } = await sql<{ table: string }>`select "table" from pragma_foreign_key_list(${table})`.execute(t.db.kysely);
    assert.ok(
      rows.some((r) => r.table === parent),
      `${table} -> ${parent}`,
    );
  }
});
