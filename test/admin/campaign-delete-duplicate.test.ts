import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/ids.js';
import { deleteCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { apiClient, assertApiError, startTestApp, type TestApp } from '../helpers/app.js';
import { insertSend, makeEmailCampaign, makeKey, makeWhatsappCampaign } from '../helpers/factories.js';
import { assertError, signedIn } from './helpers.js';

/** docs/admin-api.md, Campaigns: duplicate and delete (docs/decisions.md, Editing and deleting). */

let t: TestApp;
before(async () => {
  // Loopback webhook URLs are allowed: a copy keeps its original's webhooks as stored.
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
});
after(() => t.close());

const sendOf = (id: string) => t.db.kysely.selectFrom('sends').select(['status', 'reason']).where('id', '=', id).executeTakeFirstOrThrow();
const secretOf = (id: string) =>
  t.db.kysely.selectFrom('campaigns').select('webhook_secret').where('id', '=', id).executeTakeFirstOrThrow();

/** A webhook delivery of the send waiting for its first attempt, written directly (the dispatcher queues them). */
async function pendingDelivery(accountId: string, campaignId: string, sendId: string): Promise<string> {
  const id = newId('whd');
  const now = Date.now();
  await t.db.kysely
    .insertInto('webhook_deliveries')
    .values({
      id,
      account_id: accountId,
      campaign_id: campaignId,
      send_id: sendId,
      position: 0,
      url: 'http://127.0.0.1:9/hook',
      payload: '{}',
      status: 'pending',
      attempts: 0,
      next_attempt_at: now + 60_000,
      lease_until: null,
      last_status_code: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

describe('duplicate', () => {
  test('copies every setting, templates and webhooks under "(copy)", inactive, with a new secret; answers the copy', async () => {
    const { panel, accountId } = await signedIn(t);
    const original = await makeEmailCampaign(t, accountId, {
      name: 'Welcome',
      mode: 'delay',
      delaySeconds: 3600,
      reentry: true,
      cooldownDays: 7,
      webhooks: ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'],
    });
    const res = await panel.post(`/campaigns/${original.id}/duplicate`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { webhookSecret, ...copy } = res.body;
    assert.match(webhookSecret, /^whsec_/);
    assert.notEqual(webhookSecret, original.webhookSecret);
    assert.notEqual(copy.id, original.id);
    const source = (await panel.get(`/campaigns/${original.id}`)).body;
    const same = ({ id: _i, name: _n, active: _a, createdAt: _c, updatedAt: _u, ...settings }: Record<string, unknown>) => settings;
    assert.deepEqual(same(copy), same(source));
    assert.equal(copy.name, 'Welcome (copy)');
    assert.equal(copy.active, false);
    assert.equal(source.active, true, 'the original is untouched');
    assert.deepEqual((await panel.get(`/campaigns/${copy.id}`)).body, copy, 'the answer is the stored copy');
    assert.notEqual((await secretOf(copy.id)).webhook_secret, (await secretOf(original.id)).webhook_secret);
  });

  test('each further copy takes the next free name: (copy 2), (copy 3)', async () => {
    const { panel, accountId } = await signedIn(t, { plan: 'pro' });
    const original = await makeWhatsappCampaign(t, accountId, { name: 'Reminder' });
    const names = [];
    for (let i = 0; i < 3; i++) names.push((await panel.post(`/campaigns/${original.id}/duplicate`)).body.name);
    assert.deepEqual(names, ['Reminder (copy)', 'Reminder (copy 2)', 'Reminder (copy 3)']);
  });

  test('a 255-character name is shortened so the suffix fits', async () => {
    const { panel, accountId } = await signedIn(t);
    const original = await makeEmailCampaign(t, accountId, { name: 'x'.repeat(255) });
    const res = await panel.post(`/campaigns/${original.id}/duplicate`);
    assert.equal(res.body.name, `${'x'.repeat(248)} (copy)`);
  });

  test('an unknown or deleted campaign: 404 Campaign not found', async () => {
    const { panel, accountId } = await signedIn(t);
    assertError(await panel.post('/campaigns/cmp_nope/duplicate'), 404, 'Campaign not found');
    const gone = await makeEmailCampaign(t, accountId);
    await deleteCampaign(t.db, accountId, gone.id);
    assertError(await panel.post(`/campaigns/${gone.id}/duplicate`), 404, 'Campaign not found');
  });
});

describe('delete', () => {
  test('204; the campaign is gone from every admin route and the list', async () => {
    const { panel, accountId } = await signedIn(t);
    const kept = await makeEmailCampaign(t, accountId);
    const gone = await makeEmailCampaign(t, accountId);
    const res = await panel.del(`/campaigns/${gone.id}`);
    assert.equal(res.status, 204);
    assert.deepEqual(
      (await panel.get('/campaigns')).body.items.map((c: { id: string }) => c.id),
      [kept.id],
    );
    assertError(await panel.get(`/campaigns/${gone.id}`), 404, 'Campaign not found');
    assertError(await panel.patch(`/campaigns/${gone.id}`, { name: 'Back' }), 404, 'Campaign not found');
    assertError(await panel.get(`/campaigns/${gone.id}/stats`), 404, 'Campaign not found');
    assertError(await panel.get(`/campaigns/${gone.id}/webhook-deliveries`), 404, 'Campaign not found');
    assertError(await panel.del(`/campaigns/${gone.id}`), 404, 'Campaign not found');
  });

  test('a trigger or cancel of a deleted campaign answers exactly as for an unknown campaign', async () => {
    const { panel, accountId } = await signedIn(t);
    const { key } = await makeKey(t.db, t.config, accountId);
    const api = apiClient(t.app, key);
    const gone = await makeEmailCampaign(t, accountId);
    assert.equal((await panel.del(`/campaigns/${gone.id}`)).status, 204);
    for (const route of ['/api/campaigns/trigger', '/api/campaigns/cancel']) {
      const unknown = await api.post(route, { campaignId: 'cmp_unknown', lead: 'someone@example.com' });
      const deleted = await api.post(route, { campaignId: gone.id, lead: 'someone@example.com' });
      assertApiError(deleted, 404, 'Not Found', 'Campaign not found');
      assert.deepEqual(deleted.body, unknown.body, route);
    }
  });

  test('sends not gone out are cancelled ("campaign deleted"), waiting webhook deliveries given up; history stays', async () => {
    const { panel, accountId } = await signedIn(t);
    const campaign = await makeEmailCampaign(t, accountId);
    const pending = await insertSend(t.db, accountId, campaign.id, { status: 'pending', at: Date.now() + 3_600_000 });
    const queued = await insertSend(t.db, accountId, campaign.id, { status: 'queued' });
    const test = await insertSend(t.db, accountId, campaign.id, { status: 'queued', test: 1 });
    const sent = await insertSend(t.db, accountId, campaign.id, { status: 'sent', processed: true });
    const delivery = await pendingDelivery(accountId, campaign.id, sent.id);
    assert.equal((await panel.del(`/campaigns/${campaign.id}`)).status, 204);
    for (const send of [pending, queued, test])
      assert.deepEqual(await sendOf(send.id), { status: 'cancelled', reason: 'campaign deleted' });
    assert.deepEqual(await sendOf(sent.id), { status: 'sent', reason: null }, 'what went out is history');
    const hook = await t.db.kysely.selectFrom('webhook_deliveries').selectAll().where('id', '=', delivery).executeTakeFirstOrThrow();
    assert.deepEqual([hook.status, hook.last_error], ['failed', 'campaign deleted']);
    // The contact's activity still lists the send, with its campaign id.
    const activity = await panel.get(`/contacts/${sent.contactId}/activity`);
    assert.ok(activity.body.items.some((i: { kind: string; sendId?: string }) => i.kind === 'send' && i.sendId === sent.id));
  });

  test("another account's sends are not touched", async () => {
    const { panel, accountId } = await signedIn(t);
    const other = await signedIn(t);
    const mine = await makeEmailCampaign(t, accountId);
    const theirs = await makeEmailCampaign(t, other.accountId);
    const theirSend = await insertSend(t.db, other.accountId, theirs.id, { status: 'queued' });
    assert.equal((await panel.del(`/campaigns/${mine.id}`)).status, 204);
    assert.equal((await sendOf(theirSend.id)).status, 'queued');
  });
});

describe('security', () => {
  test("cannot delete or duplicate another account's campaign: 404, nothing changes", async () => {
    const { panel } = await signedIn(t);
    const other = await signedIn(t);
    const theirs = await makeEmailCampaign(t, other.accountId);
    assertError(await panel.del(`/campaigns/${theirs.id}`), 404, 'Campaign not found');
    assertError(await panel.post(`/campaigns/${theirs.id}/duplicate`), 404, 'Campaign not found');
    assert.equal((await other.panel.get(`/campaigns/${theirs.id}`)).status, 200);
    assert.equal((await other.panel.get('/campaigns')).body.items.length, 1, 'no copy was made in their account');
    assert.equal((await panel.get('/campaigns')).body.items.length, 0, 'nor in mine');
  });

  test('delete and duplicate need the CSRF token', async () => {
    const { panel, accountId } = await signedIn(t);
    const campaign = await makeEmailCampaign(t, accountId);
    assertError(await panel.raw({ method: 'DELETE', url: `/admin/api/campaigns/${campaign.id}` }), 403, 'Invalid CSRF token');
    assertError(await panel.post(`/campaigns/${campaign.id}/duplicate`, undefined, {}), 403, 'Invalid CSRF token');
    assert.equal((await panel.get(`/campaigns/${campaign.id}`)).status, 200);
  });
});
