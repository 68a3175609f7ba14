import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SUPPRESSED_REASON } from '../../src/dispatcher/due-checks.js';
import { campaignLinkClicks, campaignStats } from '../../src/modules/campaigns/campaigns.service.js';
import { campaignDailyStats } from '../../src/modules/campaigns/daily-stats.js';
import { suppressionsOf } from '../../src/modules/suppressions/suppressions.service.js';
import { trackEngagement } from '../../src/modules/tracking/tracking.service.js';
import { unsubscribeUrl } from '../../src/modules/unsubscribe/unsubscribe-token.js';
import { assertError, signedIn } from '../admin/helpers.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { apiClient } from '../helpers/app.js';
import { makeAccount, makeEmailCampaign, makeKey, randomEmail } from '../helpers/factories.js';
import { eventually, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * Statistics people act on (issue 13, point 10): bounces counted and their address suppressed,
 * unsubscribes counted for the campaign whose link was used, clicks per link. Real SMTP.
 */
let t: TestHerald;
let sink: SmtpSink;
before(async () => {
  sink = await SmtpSink.start();
  t = await startTestHerald({ SMTP_URL: sink.url, PUBLIC_URL: 'https://mail.example.test' });
});
after(async () => {
  await t.close();
  await sink.close();
});

async function tenant() {
  const { id: accountId } = await makeAccount(t.db);
  const { key } = await makeKey(t.db, t.config, accountId);
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { reentry: true });
  const api = apiClient(t.app, key);
  const trigger = async (email: string) => {
    const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada Lovelace' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.sendId as string;
  };
  return { accountId, campaignId, api, trigger };
}

const ended = (sendId: string) =>
  eventually(
    async () => {
      const row = await sendRow(t.db, sendId);
      return ['sent', 'error'].includes(row.status) && row;
    },
    8000,
    `send ${sendId} to end`,
  );

describe('bounces', () => {
  test('a recipient the SMTP server refuses for good: the send ends in error marked bounced, and the address is suppressed', async () => {
    const { accountId, campaignId, trigger } = await tenant();
    const email = randomEmail();
    sink.refuseRecipient(email, 550, '5.1.1 No such user here');
    const row = await ended(await trigger(email));
    assert.equal(row.status, 'error');
    assert.match(row.reason ?? '', /^smtp 550: 5\.1\.1 No such user here/);
    assert.equal(row.to_address, email);
    assert.ok(row.bounced_at !== null && Number(row.bounced_at) > 0);
    const [suppression] = await suppressionsOf(t.db, accountId, [email]);
    assert.deepEqual(suppression && { channel: suppression.channel, address: suppression.address, sendId: suppression.sendId }, {
      channel: 'email',
      address: email,
      sendId: row.id,
    });
    const stats = await campaignStats(t.db, accountId, campaignId);
    assert.deepEqual([stats.error, stats.bounced], [1, 1]);
    const today = (await campaignDailyStats(t.db, accountId, campaignId, 1))[0]!;
    assert.deepEqual([today.error, today.bounced], [1, 1]);
  });

  test('a later send to a bounced address ends in error before it is tried: the server never sees it', async () => {
    const { accountId, campaignId, trigger } = await tenant();
    const email = randomEmail();
    sink.refuseRecipient(email);
    await ended(await trigger(email));
    const messagesBefore = sink.messages.length;
    const second = await ended(await trigger(email));
    assert.equal(second.status, 'error');
    assert.equal(second.reason, SUPPRESSED_REASON);
    assert.equal(second.bounced_at, null, 'only the send the server refused counts as a bounce');
    assert.equal(sink.messages.length, messagesBefore);
    const stats = await campaignStats(t.db, accountId, campaignId);
    assert.deepEqual([stats.error, stats.bounced], [2, 1]);
  });

  test('a message refused after DATA (content, not the address) is an error but no bounce, and suppresses nothing', async () => {
    const { accountId, campaignId, trigger } = await tenant();
    const email = randomEmail();
    sink.failNext(1, 554, '5.7.1 Message refused as spam');
    const row = await ended(await trigger(email));
    assert.equal(row.status, 'error');
    assert.equal(row.bounced_at, null);
    assert.deepEqual(await suppressionsOf(t.db, accountId, [email]), []);
    const next = await ended(await trigger(email));
    assert.equal(next.status, 'sent', 'the address is still used');
    assert.equal((await campaignStats(t.db, accountId, campaignId)).bounced, 0);
  });

  test('a temporary refusal of the recipient (450) is retried, not a bounce', async () => {
    const { accountId, trigger } = await tenant();
    const email = randomEmail();
    sink.refuseRecipient(email, 450, '4.2.1 Mailbox busy');
    const sendId = await trigger(email);
    const row = await eventually(
      async () => {
        const r = await sendRow(t.db, sendId);
        return r.attempts >= 1 && r.status === 'queued' && r;
      },
      8000,
      'a retry to be scheduled',
    );
    assert.equal(row.bounced_at, null);
    assert.deepEqual(await suppressionsOf(t.db, accountId, [email]), []);
    await t.db.kysely.updateTable('sends').set({ status: 'cancelled' }).where('id', '=', sendId).execute();
  });

  test('suppression is per account: another account can still send to the address', async () => {
    const first = await tenant();
    const second = await tenant();
    const email = randomEmail();
    sink.refuseRecipient(email);
    await ended(await first.trigger(email));
    // The mailbox exists again (the other account's bounce is not this account's business).
    sink.acceptRecipient(email);
    const row = await ended(await second.trigger(email));
    assert.notEqual(row.reason, SUPPRESSED_REASON);
    assert.deepEqual(await suppressionsOf(t.db, second.accountId, [email]), []);
  });
});

describe('unsubscribes per campaign', () => {
  test("an opt-out through a send's unsubscribe link counts once for that campaign, and shows in its days", async () => {
    const { accountId, campaignId, trigger } = await tenant();
    const row = await ended(await trigger(randomEmail()));
    assert.equal(row.status, 'sent');
    const path = new URL(unsubscribeUrl(t.config, row.id)).pathname;
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'List-Unsubscribe=One-Click',
      });
      assert.equal(res.statusCode, 200);
    }
    const stats = await campaignStats(t.db, accountId, campaignId);
    assert.equal(stats.unsubscribes, 1, 'a repeat changes nothing');
    assert.equal(stats.clicks, 0, 'an unsubscribe is not a click');
    const today = (await campaignDailyStats(t.db, accountId, campaignId, 1))[0]!;
    assert.deepEqual([today.unsubscribes, today.clicks], [1, 0]);
  });
});

describe('clicks per link', () => {
  test('the most clicked link first, with unique clicks by send; 404 for another account', async () => {
    const { accountId, campaignId, trigger } = await tenant();
    const a = await ended(await trigger(randomEmail()));
    const b = await ended(await trigger(randomEmail()));
    const click = (sendId: string, url: string) => trackEngagement(t.db, { sendId, kind: 'click', url }, { count: true });
    await click(a.id, 'https://shop.example.com/sale');
    await click(a.id, 'https://shop.example.com/sale');
    await click(b.id, 'https://shop.example.com/sale');
    await click(b.id, 'https://shop.example.com/help');
    assert.deepEqual(await campaignLinkClicks(t.db, accountId, campaignId), [
      { url: 'https://shop.example.com/sale', clicks: 3, uniqueClicks: 2 },
      { url: 'https://shop.example.com/help', clicks: 1, uniqueClicks: 1 },
    ]);
    const other = await makeAccount(t.db);
    await assert.rejects(campaignLinkClicks(t.db, other.id, campaignId), { code: 'CAMPAIGN_NOT_FOUND' });
  });
});

describe('bounced addresses in the admin API', () => {
  test("the contact's profile lists its bounced address; lifting it lets the next send be tried", async () => {
    const { panel, accountId } = await signedIn(t);
    const { key } = await makeKey(t.db, t.config, accountId);
    const { id: campaignId } = await makeEmailCampaign(t, accountId, { reentry: true });
    const email = randomEmail();
    sink.refuseRecipient(email);
    const api = apiClient(t.app, key);
    const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada Lovelace' } });
    await ended(first.body.sendId);
    const profile = await panel.get(`/contacts/${first.body.leadId}`);
    assert.equal(profile.status, 200);
    assert.deepEqual(
      profile.body.suppressed.map((s: { channel: string; address: string; reason: string }) => [s.channel, s.address, s.reason]),
      [['email', email, 'smtp 550: 5.1.1 No such user here']],
    );

    const other = await signedIn(t);
    const foreign = await other.panel.post(`/contacts/${first.body.leadId}/suppressions/lift`, { address: email });
    assertError(foreign, 404, 'Lead not found');
    const unknown = await panel.post(`/contacts/${first.body.leadId}/suppressions/lift`, { address: 'nobody@example.com' });
    assertError(unknown, 404, 'Address is not suppressed');

    const lifted = await panel.post(`/contacts/${first.body.leadId}/suppressions/lift`, { address: email });
    assert.equal(lifted.status, 200);
    assert.deepEqual(lifted.body.suppressed, []);
    sink.acceptRecipient(email);
    const second = await api.post('/api/campaigns/trigger', { campaignId, lead: first.body.leadId });
    assert.equal((await ended(second.body.sendId)).status, 'sent');
  });
});
