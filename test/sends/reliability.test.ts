import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, uniq } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';
import { startHeraldProcess, type WorkerProcess } from '../helpers/processes.js';

/**
 * Nothing is lost: sends survive an SMTP outage, a worker killed mid-batch, and are shared by
 * several worker processes without doubling. The test process serves the API only (role api);
 * delivery happens in separate `herald serve --role worker` processes where a test needs them.
 */
let t: TestHerald;
let sink: SmtpSink;
const workers: WorkerProcess[] = [];
before(async () => {
  sink = await SmtpSink.start();
  // Bulk set-up: the per-key rate limit is not under test here.
  t = await startTestHerald({ SMTP_URL: sink.url, RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' }, { role: 'api' });
});
after(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL').catch(() => undefined)));
  await t.close();
  await sink.close();
});

function workerEnv(extra: Record<string, string> = {}) {
  return {
    DATA_DIR: t.config.dataDir,
    HERALD_SECRET: t.config.secret,
    DATABASE_URL: t.config.databaseUrl ?? '',
    SMTP_URL: sink.url,
    ...extra,
  };
}

/** n contacts with unique emails, each triggered once on a fresh immediate campaign. */
async function queueSends(n: number) {
  const tenant = await makeTenant(t.db, t.config, { allowance: null });
  const api = apiClient(t.app, tenant.key);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const batch = uniq('b');
  const emails = Array.from({ length: n }, (_, i) => `${batch}-${i}@example.com`);
  const sendIds: string[] = [];
  for (let i = 0; i < n; i += 50) {
    const chunk = emails.slice(i, i + 50);
    const results = await Promise.all(
      chunk.map((email) => api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Bulk Recipient' } })),
    );
    for (const r of results) {
      assert.equal(r.body.status, 'queued', JSON.stringify(r.body));
      sendIds.push(r.body.sendId);
    }
  }
  return { campaignId, emails, sendIds };
}

async function statusCounts(campaignId: string) {
  const rows = await t.db.kysely.selectFrom('sends').select(['status']).where('campaign_id', '=', campaignId).execute();
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

const received = (emails: string[]) => {
  const wanted = new Set(emails);
  const counts = new Map<string, number>();
  for (const m of sink.messages) for (const to of m.envelope.to) if (wanted.has(to)) counts.set(to, (counts.get(to) ?? 0) + 1);
  return counts;
};

describe('delivery survives failures', () => {
  test('SMTP server down, then back: the sends are retried and delivered', async () => {
    await sink.stop();
    const worker = startHeraldProcess('worker', workerEnv());
    workers.push(worker);
    const { campaignId, emails, sendIds } = await queueSends(5);
    // The worker tries, fails (connection refused) and puts the sends back with a reason.
    await eventually(
      async () => {
        const rows = await t.db.kysely
          .selectFrom('sends')
          .select(['status', 'reason', 'attempts'])
          .where('campaign_id', '=', campaignId)
          .execute();
        return rows.every((r) => r.status === 'queued' && r.attempts >= 1 && r.reason) && rows;
      },
      8000,
      'the failed attempts to be recorded',
    );
    await sink.restart();
    await eventually(async () => (await statusCounts(campaignId)).sent === 5, 20000, 'all five sent after the server came back');
    const counts = received(emails);
    assert.deepEqual(
      emails.map((e) => counts.get(e)),
      [1, 1, 1, 1, 1],
    );
    for (const id of sendIds) assert.ok((await sendRow(t.db, id)).attempts >= 2, 'delivered on a retry');
    await worker.stop();
  });

  test('a worker killed with SIGKILL in the middle of a batch loses nothing: after a restart every send is sent', async () => {
    const { campaignId, emails } = await queueSends(300);
    const first = startHeraldProcess('worker', workerEnv({ SEND_LEASE_SECONDS: '2' }));
    workers.push(first);
    // Kill it while it has sends claimed and not yet recorded.
    await eventually(
      async () => {
        const counts = await statusCounts(campaignId);
        return (counts.sending ?? 0) > 0 && (counts.sent ?? 0) > 0 && (counts.queued ?? 0) > 0;
      },
      20000,
      'the worker to be mid-batch',
    );
    await first.kill('SIGKILL');
    const atKill = await statusCounts(campaignId);
    assert.ok((atKill.queued ?? 0) + (atKill.sending ?? 0) > 0, 'work was left over');
    const second = startHeraldProcess('worker', workerEnv({ SEND_LEASE_SECONDS: '2' }));
    workers.push(second);
    await eventually(async () => (await statusCounts(campaignId)).sent === 300, 30000, 'every send to end sent');
    const counts = received(emails);
    assert.deepEqual(
      emails.filter((e) => !counts.get(e)),
      [],
      'every recipient got the message (at least once)',
    );
    await second.stop();
  });

  test('two worker processes draining 1,000 due sends deliver each exactly once', async () => {
    const { campaignId, emails } = await queueSends(1000);
    const pair = [startHeraldProcess('worker', workerEnv()), startHeraldProcess('worker', workerEnv())];
    workers.push(...pair);
    await eventually(async () => (await statusCounts(campaignId)).sent === 1000, 60000, 'all 1,000 sent');
    const counts = received(emails);
    assert.equal(counts.size, 1000, 'every recipient got the message');
    assert.deepEqual([...new Set(counts.values())], [1], 'nobody got it twice');
    const codes = await Promise.all(pair.map((w) => w.stop()));
    assert.deepEqual(codes, [0, 0], 'both workers stop cleanly on SIGTERM');
  });
});
