import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { MAX_GROUPS_IN_FLIGHT } from '../../src/db/postgres-group-commit.js';
import { openPixelUrl } from '../../src/modules/tracking/tracking-token.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';
import { parseMetrics, sampleValue, scrape } from './scrape.js';

/** /metrics from the outside: real sends to a real SMTP sink move the numbers. */
let t: TestHerald;
let sink: SmtpSink;
let receiver: WebhookReceiver;
before(async () => {
  sink = await SmtpSink.start();
  receiver = await WebhookReceiver.start();
  t = await startTestHerald({ SMTP_URL: sink.url });
});
after(async () => {
  await t.close();
  await Promise.all([sink.close(), receiver.close()]);
});

describe('GET /metrics', () => {
  test('is the Prometheus text format, with the process metrics, and needs no API key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const samples = parseMetrics(res.body);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'herald_info']) {
      assert.ok(
        samples.some((s) => s.name === name),
        name,
      );
    }
    assert.equal(sampleValue(samples, 'herald_info', { role: 'all', engine: t.db.engine }), 1);
  });

  test('sends going out move the send counter, the lag histogram, the HTTP counter and the webhook counter', async () => {
    const { accountId, key } = await makeTenant(t.db, t.config);
    const { id: campaignId } = await makeEmailCampaign(t, accountId, { webhooks: [receiver.url('/hook')] });
    const before = (await scrape(t.app)).samples;
    const api = apiClient(t.app, key);
    const emails = [randomEmail(), randomEmail(), randomEmail()];
    for (const email of emails)
      assert.equal((await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada Lovelace' } })).status, 200);
    await eventually(() => emails.every((e) => sink.messages.some((m) => m.envelope.to.includes(e))), 5000, 'three emails at the sink');

    const delta = (samples: ReturnType<typeof parseMetrics>, name: string, labels: Record<string, string>) =>
      sampleValue(samples, name, labels) - sampleValue(before, name, labels);
    const after = await eventually(
      async () => {
        const { samples } = await scrape(t.app);
        return delta(samples, 'herald_webhook_deliveries_total', { outcome: 'delivered' }) >= 3 && samples;
      },
      5000,
      'three webhooks delivered',
    );
    // At least: on a shared PostgreSQL this dispatcher may also finish sends other test files left queued.
    const sent = delta(after, 'herald_sends_total', { channel: 'email', outcome: 'sent' });
    assert.ok(sent >= 3, `${sent} sent`);
    assert.equal(delta(after, 'herald_send_lag_seconds_count', { channel: 'email' }), sent, 'one lag observation per send delivered');
    const trigger = { method: 'POST', route: '/api/campaigns/trigger', status: '200' };
    assert.equal(delta(after, 'herald_http_requests_total', trigger), 3);
    assert.equal(delta(after, 'herald_http_request_duration_seconds_count', trigger), 3);
  });

  test('queue depth counts due, scheduled and in-flight sends from the database', async () => {
    const { accountId, key } = await makeTenant(t.db, t.config);
    const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
    const before = (await scrape(t.app)).samples;
    const scheduledBefore = sampleValue(before, 'herald_queue_sends', { state: 'scheduled' });
    for (const state of ['due', 'scheduled', 'in_flight'])
      assert.ok(
        before.some((s) => s.name === 'herald_queue_sends' && s.labels.state === state),
        state,
      );
    const api = apiClient(t.app, key);
    assert.equal(
      (await api.post('/api/campaigns/trigger', { campaignId, lead: { email: randomEmail(), name: 'Ada Lovelace' } })).body.status,
      'pending',
    );
    assert.equal(
      (await api.post('/api/campaigns/trigger', { campaignId, lead: { email: randomEmail(), name: 'Ada Lovelace' } })).body.status,
      'pending',
    );
    // The gauges are read at most once a second.
    await eventually(
      async () => sampleValue((await scrape(t.app)).samples, 'herald_queue_sends', { state: 'scheduled' }) === scheduledBefore + 2,
      3000,
      'two more scheduled sends',
    );
    for (const state of ['due', 'scheduled', 'in_flight'])
      assert.ok(
        before.some((s) => s.name === 'herald_webhook_backlog' && s.labels.state === state),
        state,
      );
  });

  test('PostgreSQL pool use is reported; SQLite has no pool and no such series', async () => {
    const { samples } = await scrape(t.app);
    const pool = samples.filter((s) => s.name.startsWith('herald_db_pool_'));
    if (t.db.engine === 'sqlite') return assert.deepEqual(pool, []);
    assert.ok(sampleValue(samples, 'herald_db_pool_connections', { state: 'total' }) >= 1);
    assert.ok(samples.some((s) => s.name === 'herald_db_pool_connections' && s.labels.state === 'idle'));
    assert.ok(samples.some((s) => s.name === 'herald_db_pool_waiting'));
    assert.equal(sampleValue(samples, 'herald_db_pool_max'), 10);
  });

  test("PostgreSQL's group commits are counted; SQLite has none", async () => {
    const groupSeries = (samples: { name: string }[]) => samples.filter((s) => /^herald_db_group(ed)?_/.test(s.name));
    if (t.db.engine === 'sqlite') return assert.deepEqual(groupSeries((await scrape(t.app)).samples), []);
    const before = (await scrape(t.app)).samples;
    // Statements that arrive while the group in flight is a slow one leave as one group.
    const holders = Array.from({ length: MAX_GROUPS_IN_FLIGHT }, () => sql`select pg_sleep(0.2)`.execute(t.db.grouped));
    await Promise.all([...holders, ...[1, 2, 3].map((n) => sql`select ${n}::int as n`.execute(t.db.grouped))]);
    const afterwards = (await scrape(t.app)).samples;
    const committed = (samples: typeof before) => sampleValue(samples, 'herald_db_group_commits_total', { outcome: 'committed' });
    assert.equal(committed(afterwards), committed(before) + 1);
    assert.equal(
      sampleValue(afterwards, 'herald_db_grouped_statements_total'),
      sampleValue(before, 'herald_db_grouped_statements_total') + 3,
    );
    assert.equal(sampleValue(afterwards, 'herald_db_group_commits_total', { outcome: 'rolled_back' }), t.db.groupCommit!.counts.rolledBack);
  });

  test('HTTP series are labelled by route pattern: no id, token or key reaches a label', async () => {
    const { accountId, key } = await makeTenant(t.db, t.config);
    const { id: campaignId } = await makeEmailCampaign(t, accountId);
    const api = apiClient(t.app);
    const email = randomEmail();
    assert.equal((await apiClient(t.app, key).post('/api/leads', { email, name: 'Ada Lovelace' })).status, 200);
    const triggered = await api.get(`/api/campaigns/trigger?campaignId=${campaignId}&lead=${encodeURIComponent(email)}&api-key=${key}`);
    assert.equal(triggered.status, 200);
    const sendId: string = triggered.body.sendId;
    // Delivered before the test ends: nothing left queued for the next run on a shared database.
    await eventually(() => sink.messages.some((m) => m.envelope.to.includes(email)), 5000, 'the email at the sink');
    const pixel = new URL(openPixelUrl(t.config, sendId)).pathname;
    await api.get(pixel);
    await api.get(`/unsubscribe/${pixel.split('/').pop()}`);
    await api.get(`/api/nowhere/${sendId}?api-key=${key}`);
    await api.get(`/admin/api/contacts/${accountId}`, { authorization: `Bearer ${key}` });

    const { text, samples } = await scrape(t.app);
    for (const secret of [key, campaignId, sendId, accountId, email, pixel.split('/').pop()!])
      assert.ok(!text.includes(secret), `metrics must not contain ${secret.slice(0, 12)}…`);
    const routes = new Set(samples.filter((s) => s.name === 'herald_http_requests_total').map((s) => s.labels.route!));
    assert.ok(routes.has('/t/o/:token'), [...routes].join(' '));
    assert.ok(routes.has('unmatched'), 'a path no route matches has one label, whatever the path');
    for (const route of routes) assert.match(route, /^(unmatched|\/[a-z0-9/:._*-]*)$/i, route);
  });
});
