import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, uniq } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * A lease never runs out while its worker is still delivering: with a one-second lease and an
 * SMTP server that holds every message for several seconds, the worker keeps renewing its
 * leases, so it does not take its own sends back and send them again.
 */
let t: TestHerald;
let sink: SmtpSink;
before(async () => {
  sink = await SmtpSink.start();
  t = await startTestHerald({ SMTP_URL: sink.url, SEND_LEASE_SECONDS: '1' });
});
after(async () => {
  await t.close();
  await sink.close();
});

test('an SMTP server stalling for four lease lengths: every message goes out once, and ends sent', async () => {
  const tenant = await makeTenant(t.db, t.config);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const api = apiClient(t.app, tenant.key);
  sink.stallFor(4_000);
  const emails = Array.from({ length: 12 }, () => `${uniq('slow')}@example.com`);
  for (const email of emails) {
    const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Patient' } });
    assert.equal(res.body.status, 'queued', JSON.stringify(res.body));
  }
  await eventually(
    async () => {
      const rows = await t.db.kysely.selectFrom('sends').select(['status', 'attempts']).where('campaign_id', '=', campaignId).execute();
      return rows.length === emails.length && rows.every((r) => r.status === 'sent') && rows;
    },
    15_000,
    'every send to end sent',
  ).then((rows) => assert.deepEqual([...new Set(rows.map((r) => r.attempts))], [1], 'each delivered on its first attempt'));
  const wanted = new Set(emails);
  const received = sink.messages.filter((m) => wanted.has(m.envelope.to[0]!)).map((m) => m.envelope.to[0]);
  assert.deepEqual(received.sort(), emails.sort(), 'each recipient got the message exactly once');
});
