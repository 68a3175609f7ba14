import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { apiClient } from '../helpers/app.js';
import { makeAccount, makeKey, randomEmail, randomPhone } from '../helpers/factories.js';
import { makeEmailCampaign, sleep, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * A trigger that waits for a contact write holding the contact's row sees that write in full
 * once it gets the lock: here the contact's first email, added by the write it waited for.
 * PostgreSQL only: SQLite transactions never run side by side.
 */
const url = process.env.DATABASE_URL;
let t: TestHerald;
before(async () => {
  if (url) t = await startTestHerald({}, { role: 'api' });
});
after(() => t?.close());

test('a trigger blocked by a write adding the first email uses that email', { skip: !url && 'PostgreSQL only (DATABASE_URL unset)' }, async () => {
  const { id: accountId } = await makeAccount(t.db, { allowance: null });
  const { key } = await makeKey(t.db, t.config, accountId);
  const api = apiClient(t.app, key);
  const lead = await api.post('/api/leads', { phone: randomPhone(), name: 'Phone Only' });
  assert.equal(lead.status, 200, JSON.stringify(lead.body));
  const contactId = lead.body.id as string;
  const { id: campaignId } = await makeEmailCampaign(t, accountId);
  const email = randomEmail();

  // Another writer (a contact update in flight) holds the contact row and adds its first email.
  const writer = new pg.Client({ connectionString: url });
  await writer.connect();
  try {
    await writer.query('begin');
    await writer.query('update contacts set updated_at = updated_at + 1 where id = $1', [contactId]);
    await writer.query('insert into contact_emails (account_id, email, contact_id, position) values ($1, $2, $3, 0)', [accountId, email, contactId]);
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
