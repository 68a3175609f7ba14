import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign, sleep, startTestHerald, type TestHerald } from '../helpers/herald.js';
import { type PgBouncer, pgBouncerBinary, startPgBouncer } from '../helpers/pgbouncer.js';
import { startHeraldProcess, type WorkerProcess } from '../helpers/processes.js';

/**
 * Herald behind PgBouncer in transaction mode (README, Running in production): every statement
 * of the API and the worker goes through a bouncer that hands each transaction (each autocommit
 * statement) whatever server connection is free, three of them for everyone, so nothing may
 * rely on session state. Only the worker's LISTEN goes to the server itself
 * (DATABASE_LISTEN_URL): through the bouncer it would hear nothing.
 */
const direct = process.env.DATABASE_URL;
const skip = !direct ? 'PostgreSQL only (DATABASE_URL)' : !pgBouncerBinary() ? 'pgbouncer is not installed (.ci/run installs it)' : false;

describe('behind PgBouncer in transaction mode', { skip }, () => {
  let bouncer: PgBouncer;
  let sink: SmtpSink;
  let t: TestHerald;
  let worker: WorkerProcess;

  before(async () => {
    bouncer = await startPgBouncer(direct!);
    sink = await SmtpSink.start();
    // The API in this process (migrations at start included), through the bouncer.
    t = await startTestHerald(
      {
        DATABASE_URL: bouncer.url,
        // PgBouncer 1.18 (Debian 12) mixes named statements up between clients.
        DATABASE_PREPARED_STATEMENTS: 'false',
        SMTP_URL: sink.url,
        RATE_LIMIT_PER_SECOND: '100000',
        RATE_LIMIT_BURST: '100000',
      },
      { role: 'api' },
    );
    worker = startHeraldProcess('worker', {
      DATA_DIR: t.config.dataDir,
      HERALD_SECRET: t.config.secret,
      DATABASE_URL: bouncer.url,
      DATABASE_PREPARED_STATEMENTS: 'false',
      DATABASE_LISTEN_URL: direct!,
      SMTP_URL: sink.url,
    });
  });
  after(async () => {
    await worker?.stop();
    await t?.close();
    await sink?.close();
    await bouncer?.close();
  });

  test('contact writes, idempotent triggers, restarts and cancels work, and the worker is woken through its direct LISTEN', async () => {
    const { accountId, key } = await makeTenant(t.db, t.config, { allowance: null });
    const api = apiClient(t.app, key);
    const immediate = await makeEmailCampaign(t, accountId);
    const delayed = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
    // Let the worker start, poll once and fall idle: its next poll is 5 s away, so a delivery
    // within 4 s below was woken by a NOTIFY it heard.
    await sleep(1500);

    const emails = Array.from({ length: 30 }, () => randomEmail());
    const triggers = await Promise.all(
      emails.map((email, i) =>
        api.post(
          '/api/campaigns/trigger',
          { campaignId: immediate.id, lead: { email, name: 'Ada Bouncer', tags: ['pgb'] } },
          i % 3 === 0 ? { 'Idempotency-Key': `pgb-${email}` } : {},
        ),
      ),
    );
    for (const r of triggers) assert.equal(r.body.status, 'queued', JSON.stringify(r.body));
    // Each of ours within 4 s (the worker may also deliver what other test files left due).
    await sink.waitForRecipients(emails, 4000);

    // A replay with the same key answers the stored 200, through a different server connection.
    const replay = await api.post(
      '/api/campaigns/trigger',
      { campaignId: immediate.id, lead: { email: emails[0], name: 'Ada Bouncer', tags: ['pgb'] } },
      { 'Idempotency-Key': `pgb-${emails[0]}` },
    );
    assert.deepEqual(replay.body, triggers[0]!.body);

    // Concurrent Delay triggers for one contact: one pending send, restarted; then cancelled once.
    const lead = emails[1]!;
    const restarts = await Promise.all(
      Array.from({ length: 8 }, () => api.post('/api/campaigns/trigger', { campaignId: delayed.id, lead })),
    );
    assert.equal(new Set(restarts.map((r) => r.body.sendId)).size, 1, JSON.stringify(restarts.map((r) => r.body)));
    const cancels = await Promise.all(Array.from({ length: 4 }, () => api.post('/api/campaigns/cancel', { campaignId: delayed.id, lead })));
    assert.deepEqual(cancels.map((r) => r.body.cancelled).sort(), [false, false, false, true]);

    const events = await Promise.all(triggers.slice(0, 10).map((r) => api.post('/api/events', { type: 'visit', leadId: r.body.leadId })));
    for (const r of events) assert.equal(r.status, 200, JSON.stringify(r.body));
    // Nothing the worker logged at warn or above (a lost LISTEN, a failed statement).
    assert.doesNotMatch(worker.output(), /"level":(40|50|60)/);
  });

  test('batches: lead items in pipelines inside their transaction, a failure mid-pipeline included, and events in one pipeline', async () => {
    const { key } = await makeTenant(t.db, t.config);
    const api = apiClient(t.app, key);
    const known = Array.from({ length: 40 }, () => randomEmail());
    const created = await api.post('/api/leads/batch', { items: known.map((email) => ({ email, name: 'Ada Bouncer' })) });
    assert.deepEqual(new Set(created.body.results.map((r: { status: number }) => r.status)), new Set([200]));
    const nameless = randomEmail();
    const items = [
      ...known.slice(0, 20).map((email) => ({ email, tags: ['first'] })),
      { email: nameless, tags: ['refused'] },
      { email: nameless, name: 'Named Later' },
      ...known.slice(20).map((email) => ({ email, tags: ['second'] })),
    ];
    const res = await api.post('/api/leads/batch', { items });
    const statuses = res.body.results.map((r: { status: number }) => r.status);
    assert.deepEqual(
      statuses,
      items.map((_, i) => (i === 20 ? 400 : 200)),
      JSON.stringify(res.body.results[20]),
    );
    assert.equal(res.body.results[21].body.created, true);
    const leadId = created.body.results[0].body.id;
    const events = await api.post('/api/events/batch', { items: Array.from({ length: 150 }, () => ({ type: 'visit', leadId })) });
    assert.deepEqual(new Set(events.body.results.map((r: { status: number }) => r.status)), new Set([200]));
  });
});
