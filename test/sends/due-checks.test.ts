import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { inReadTransaction } from '../../src/db/transaction.js';
import { checkAtDueTime, readDueData } from '../../src/dispatcher/due-checks.js';
import { findCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { getContactProfile, setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { apiClient } from '../helpers/app.js';
import { makeAccount, makeKey, randomEmail, randomPhone } from '../helpers/factories.js';
import { makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';

// The due-time checks of a claimed batch read every send's campaign and contact at once: each
// send must get what the per-send reads give, and nothing of another account.
let t: TestHerald;
before(async () => {
  t = await startTestHerald();
});
after(() => t.close());

async function tenant() {
  const { id: accountId } = await makeAccount(t.db);
  const { key } = await makeKey(t.db, t.config, accountId);
  const api = apiClient(t.app, key);
  const lead = async (body: Record<string, unknown>) => (await api.post('/api/leads', { name: 'Ada', ...body })).body.id as string;
  return { accountId, api, lead };
}

test('a batch read gives each contact and campaign what the single reads give, and nothing of another account', async () => {
  const a = await tenant();
  const b = await tenant();
  const first = randomEmail();
  const rich = await a.lead({ email: first, tags: ['vip', 'beta'], metadata: { plan: 'pro' } });
  await a.api.post('/api/leads', { id: rich, email: randomEmail(), phone: randomPhone(), tags: ['alpha'] });
  const bare = await a.lead({ phone: randomPhone() });
  const optedOut = await a.lead({ email: randomEmail() });
  await setContactFlags(t.db, a.accountId, optedOut, { optedOut: true });
  const foreign = await b.lead({ email: randomEmail(), tags: ['vip'] });
  const campaignA = (await makeEmailCampaign(t, a.accountId)).id;
  const campaignB = (await makeEmailCampaign(t, b.accountId)).id;

  const send = (id: string, contactId: string, campaignId = campaignA) => ({
    id,
    account_id: a.accountId,
    campaign_id: campaignId,
    contact_id: contactId,
    channel: 'email' as const,
    attempts: 1,
    due_at: 0,
    test: false,
    triggerData: null,
  });
  const sends = [send('s1', rich), send('s2', bare), send('s3', optedOut), send('s4', foreign), send('s5', rich, campaignB)];

  const data = await inReadTransaction(t.db, (tx) => readDueData(tx, sends));
  assert.deepEqual([...data.contacts.keys()].sort(), [rich, bare, optedOut].sort());
  for (const id of [rich, bare, optedOut]) assert.deepEqual(data.contacts.get(id), await getContactProfile(t.db, a.accountId, { id }));
  assert.equal(data.contacts.get(rich)!.emails[0], first);
  assert.deepEqual([...data.campaigns.keys()], [campaignA]);
  assert.deepEqual(data.campaigns.get(campaignA), await findCampaign(t.db.kysely, a.accountId, campaignA));

  const verdicts = await checkAtDueTime(t.db, sends, Date.now());
  const summary = Object.fromEntries([...verdicts].map(([id, v]) => [id, 'end' in v ? `${v.end}: ${v.reason}` : `to ${v.to}`]));
  assert.deepEqual(summary, {
    s1: `to ${first}`,
    s2: 'error: contact has no email address',
    s3: 'optout: null',
    s4: 'error: contact not found',
    s5: 'error: campaign not active',
  });
});
