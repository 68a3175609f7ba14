import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { apiClient } from '../helpers/app.js';
import { makeAccount, makeKey, randomEmail, randomPhone } from '../helpers/factories.js';
import { makeEmailCampaign, sleep, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * Triggers racing other writers on PostgreSQL (SQLite transactions never run side by side):
 * whatever a trigger waited for counts once it goes on. Another client holds rows open in a
 * transaction, the trigger starts and blocks on them, then the other client commits.
 */
const url = process.env.DATABASE_URL;
let t: TestHerald;
before(async () => {
  if (url) t = await startTestHerald({}, { role: 'api' });
});
after(() => t?.close());

test('a trigger blocked by a write adding the first email uses that email', {
  skip: !url && 'PostgreSQL only (DATABASE_URL unset)',
}, async () => {
  const { id: accountId } = await makeAccount(t.db, { allowance: null });
  const { key } = await makeKey(t.db, t.config, accountId);
  const api = apiClient(t.app, key);
  const lead = await api.post('/api/leads', { phone: randomPhone(), name: 'Phone Only' });
  assert.equal(lead.status, 200, JSON.stringify(lead.body));
  const contactId = lead.body.id as string;
  const { id: campaignId } = await makeEmailCampaign(t, accountId);
  const email = randomEmail();

  const writer = new pg.Client({ connectionString: url });
  await writer.connect();
  try {
    // A contact update in flight: holds the contact row and adds its first email.
    await writer.query('begin');
    await writer.query('update contacts set updated_at = updated_at + 1 where id = $1', [contactId]);
    await writer.query('insert into contact_emails (account_id, email, contact_id, position) values ($1, $2, $3, 0)', [
      accountId,
      email,
      contactId,
    ]);
    const trigger = api.post('/api/campaigns/trigger', { campaignId, lead: contactId });
    await sleep(300); // the trigger reaches the contact's lock and waits there
    await writer.query('commit');
    const res = await trigger;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.status, 'queued', 'the email committed before the trigger got the lock is there');
    const row = await t.db.kysely.selectFrom('sends').select(['to_address']).where('id', '=', res.body.sendId).executeTakeFirstOrThrow();
    assert.equal(row.to_address, email);
  } finally {
    await writer.end();
  }
});

test('a Delay re-trigger whose pending send a worker claims meanwhile is Rejected, not a second send', {
  skip: !url && 'PostgreSQL only (DATABASE_URL unset)',
}, async () => {
  const { id: accountId } = await makeAccount(t.db, { allowance: 1 });
  const { key } = await makeKey(t.db, t.config, accountId);
  const api = apiClient(t.app, key);
  const email = randomEmail();
  assert.equal((await api.post('/api/leads', { email, name: 'Delayed One' })).status, 200);
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 600 });
  const first = await api.post('/api/campaigns/trigger', { campaignId, lead: email });
  assert.equal(first.body.status, 'pending', JSON.stringify(first.body));

  // A worker's claim in flight: the pending send becomes `sending` (claims take no contact lock).
  const worker = new pg.Client({ connectionString: url });
  await worker.connect();
  try {
    await worker.query('begin');
    await worker.query("update sends set status = 'sending', attempts = attempts + 1 where id = $1", [first.body.sendId]);
    const second = api.post('/api/campaigns/trigger', { campaignId, lead: email });
    await sleep(300); // the trigger's restart waits for the send's row
    await worker.query('commit');
    const res = await second;
    // Rejected (re-entry is off), answered 200 although the allowance of 1 is used up.
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.status, 'rejected');
    const rows = await t.db.kysely
      .selectFrom('sends')
      .select(['status'])
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .execute();
    assert.deepEqual(rows, [], 'no second pending send');
  } finally {
    await worker.end();
  }
});
