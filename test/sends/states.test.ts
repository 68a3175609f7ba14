import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { campaignStats } from '../../src/modules/campaigns/campaigns.service.js';
import { setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, sendRow, sleep, startTestHerald, type TestHerald } from '../helpers/herald.js';

/** Every row of the spec's "States and transitions" table for sends, observed at a real SMTP sink. */
let t: TestHerald;
let sink: SmtpSink;
before(async () => {
  sink = await SmtpSink.start();
  t = await startTestHerald({ SMTP_URL: sink.url });
});
after(async () => {
  await t.close();
  await sink.close();
});

const mailsTo = (email: string) => sink.messages.filter((m) => m.envelope.to.includes(email));

async function setup(campaign: Parameters<typeof makeEmailCampaign>[2] = {}) {
  const tenant = await makeTenant(t.db, t.config);
  const api = apiClient(t.app, tenant.key);
  const email = randomEmail();
  const lead = await api.post('/api/leads', { email, name: 'Grace Hopper' });
  assert.equal(lead.status, 200);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId, campaign);
  return { ...tenant, api, email, leadId: lead.body.id as string, campaignId };
}

describe('Immediate send', () => {
  test('a trigger answers mode immediate and the message goes out right after, personalised', async () => {
    const s = await setup();
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    assert.equal(res.status, 200);
    assert.deepEqual(
      { ...res.body, sendId: undefined },
      { campaignId: s.campaignId, leadId: s.leadId, mode: 'immediate', status: 'queued', sendId: undefined },
    );
    assert.match(res.body.sendId, /^snd_/);
    const [mail] = await eventually(() => mailsTo(s.email).length === 1 && mailsTo(s.email), 3000, 'the email');
    assert.equal(mail!.subject, 'Hello Grace Hopper');
    assert.match(mail!.html ?? '', /Hi Grace Hopper/);
    assert.match(mail!.text ?? '', /Hi Grace Hopper/);
    assert.match(mail!.from, /^"?Acme"? <news@acme.test>$/);
    assert.deepEqual(mail!.envelope.to, [s.email]);
    const row = await eventually(async () => {
      const r = await sendRow(t.db, res.body.sendId);
      return r.status === 'sent' && r;
    });
    assert.equal(row.to_address, s.email);
  });

  test('each immediate call is a new trigger (re-entry on, no cooldown): two sends, two messages', async () => {
    const s = await setup({ reentry: true, cooldownDays: 0 });
    const first = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    const second = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual([first.body.status, second.body.status], ['queued', 'queued']);
    assert.notEqual(first.body.sendId, second.body.sendId);
    await eventually(() => mailsTo(s.email).length === 2, 3000, 'two emails');
  });
});

describe('Delayed send', () => {
  test('a trigger answers mode delay, pending; the message goes out not before the due time and within 1 s after', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 1 });
    const triggeredAt = Date.now();
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual([res.status, res.body.mode, res.body.status], [200, 'delay', 'pending']);
    const row = await sendRow(t.db, res.body.sendId);
    assert.ok(row.due_at >= triggeredAt + 1000 && row.due_at <= Date.now() + 1000, 'due one delay after the trigger');
    await sleep(Math.max(0, row.due_at - Date.now() - 150));
    assert.equal(mailsTo(s.email).length, 0, 'nothing before the due time');
    await eventually(() => mailsTo(s.email).length === 1, 2500, 'the delayed email');
    // The sink has the message a moment before the outcome is recorded.
    const sent = await eventually(
      async () => {
        const r = await sendRow(t.db, res.body.sendId);
        return r.status === 'sent' && r;
      },
      1000,
      'the send recorded as sent',
    );
    assert.ok(sent.sent_at! >= row.due_at, 'never before the due time');
    assert.ok(sent.sent_at! - row.due_at < 1000, `within 1 s of the due time (took ${sent.sent_at! - row.due_at} ms)`);
  });

  test('a second trigger while pending restarts the timer: same send, one message', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 1 });
    const first = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    const firstDue = (await sendRow(t.db, first.body.sendId)).due_at;
    await sleep(600);
    const second = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual([second.body.status, second.body.sendId], ['pending', first.body.sendId]);
    const restartedDue = (await sendRow(t.db, first.body.sendId)).due_at;
    assert.ok(restartedDue >= firstDue + 500, 'the due time moved to now + delay');
    await sleep(firstDue - Date.now() + 200);
    assert.equal(mailsTo(s.email).length, 0, 'the first due time passed without a message');
    await eventually(() => mailsTo(s.email).length === 1, 2500, 'the one email');
    await sleep(300);
    assert.equal(mailsTo(s.email).length, 1, 'exactly one message');
    const count = await t.db.kysely
      .selectFrom('sends')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', s.campaignId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1, 'one send row');
  });

  test('cancel of a pending send: cancelled true, nothing goes out, and it does not count as a send', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 1 });
    const trig = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    const res = await s.api.post('/api/campaigns/cancel', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual(res.body, { cancelled: true, campaignId: s.campaignId, leadId: s.leadId });
    assert.equal((await sendRow(t.db, trig.body.sendId)).status, 'cancelled');
    await sleep(1500);
    assert.equal(mailsTo(s.email).length, 0);
    const stats = await campaignStats(t.db, s.accountId, s.campaignId);
    assert.deepEqual([stats.sent, stats.pending, stats.cancelled], [0, 0, 1]);
    // Cancel again: nothing pending any more.
    const again = await s.api.post('/api/campaigns/cancel', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual(again.body, { cancelled: false, campaignId: s.campaignId, leadId: s.leadId });
  });

  test('cancel with nothing pending answers cancelled false, any number of times: never triggered', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 60 });
    for (let i = 0; i < 3; i++) {
      const res = await s.api.post('/api/campaigns/cancel', { campaignId: s.campaignId, lead: s.leadId });
      assert.deepEqual([res.status, res.body.cancelled], [200, false]);
    }
  });

  test('cancel with nothing pending: already sent', async () => {
    const s = await setup({ mode: 'delay', delaySeconds: 1 });
    const trig = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    await eventually(async () => (await sendRow(t.db, trig.body.sendId)).status === 'sent', 3000, 'sent');
    const res = await s.api.post('/api/campaigns/cancel', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual([res.status, res.body.cancelled], [200, false]);
    assert.equal((await sendRow(t.db, trig.body.sendId)).status, 'sent');
  });

  test('cancel with nothing pending: the campaign is Immediate', async () => {
    const s = await setup();
    await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    const res = await s.api.post('/api/campaigns/cancel', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual([res.status, res.body.cancelled], [200, false]);
    await eventually(() => mailsTo(s.email).length === 1, 3000, 'the immediate email still goes out');
  });
});

describe('Recipient status', () => {
  test('already received and re-entry off: Rejected, nothing sent', async () => {
    const s = await setup();
    const first = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    await eventually(() => mailsTo(s.email).length === 1, 3000, 'first email');
    const second = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    assert.equal(second.status, 200);
    assert.equal(second.body.status, 'rejected');
    assert.notEqual(second.body.sendId, first.body.sendId);
    await sleep(300);
    assert.equal(mailsTo(s.email).length, 1);
    const stats = await campaignStats(t.db, s.accountId, s.campaignId);
    assert.deepEqual([stats.sent, stats.rejected], [1, 1]);
  });

  test('a queued (not yet sent) send already counts as received', async () => {
    const s = await setup();
    const [a, b] = await Promise.all([
      s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email }),
      s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email }),
    ]);
    assert.deepEqual([a.body.status, b.body.status].sort(), ['queued', 'rejected']);
    await sleep(500);
    assert.equal(mailsTo(s.email).length, 1);
  });

  test('re-entry on with a cooldown: rejected inside the cooldown, allowed once it has passed', async () => {
    const s = await setup({ reentry: true, cooldownDays: 2 });
    const first = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    await eventually(async () => (await sendRow(t.db, first.body.sendId)).status === 'sent', 3000, 'sent');
    assert.equal((await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email })).body.status, 'rejected');
    // Age the receipt past the cooldown.
    const threeDaysAgo = Date.now() - 3 * 24 * 3600 * 1000;
    await t.db.kysely
      .updateTable('sends')
      .set({ sent_at: threeDaysAgo, created_at: threeDaysAgo })
      .where('id', '=', first.body.sendId)
      .execute();
    assert.equal((await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email })).body.status, 'queued');
    await eventually(() => mailsTo(s.email).length === 2, 3000, 'second email');
  });

  test('opted out: Optout, nothing sent', async () => {
    const s = await setup();
    await setContactFlags(t.db, s.accountId, s.leadId, { optedOut: true });
    const res = await s.api.post('/api/campaigns/trigger', { campaignId: s.campaignId, lead: s.email });
    assert.deepEqual([res.status, res.body.status, res.body.mode], [200, 'optout', 'immediate']);
    await sleep(300);
    assert.equal(mailsTo(s.email).length, 0);
    assert.equal((await campaignStats(t.db, s.accountId, s.campaignId)).optout, 1);
  });
});
