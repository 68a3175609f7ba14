import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { journalPathOf } from '../../src/channels/email/smtp.js';
import { AcceptanceJournal } from '../../src/db/acceptance-journal.js';
import { setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { apiClient } from '../helpers/app.js';
import { makeTenant, uniq } from '../helpers/factories.js';
import { eventually, makeEmailCampaign, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';
import { startHeraldProcess, type WorkerProcess } from '../helpers/processes.js';

/**
 * The SMTP thread's acceptance journal (docs/decisions.md, "The SMTP pool on its own thread";
 * SQLite only): a send whose worker died after the server accepted its message, before the
 * outcome's write, is recorded sent by the claim that takes it again, and not sent twice. The
 * test plays the dead worker: a send claimed by it (leased, lease run out) and its thread's
 * note in the journal; then a real worker process claims it.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);
let t: TestHerald;
let sink: SmtpSink;
const workers: WorkerProcess[] = [];
before(async () => {
  sink = await SmtpSink.start();
  t = await startTestHerald({ SMTP_URL: sink.url }, { role: 'api' });
});
after(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL').catch(() => undefined)));
  await t.close();
  await sink.close();
});

/** Two sends left by a dead worker: claimed once, its lease run out. */
async function sendsOfADeadWorker() {
  const tenant = await makeTenant(t.db, t.config, { allowance: null });
  const api = apiClient(t.app, tenant.key);
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  const emails = [`${uniq('noted')}@example.com`, `${uniq('unnoted')}@example.com`, `${uniq('noted-opted-out')}@example.com`];
  const sendIds: string[] = [];
  const contactIds: string[] = [];
  for (const email of emails) {
    const res = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada Lovelace' } });
    assert.equal(res.body.status, 'queued', JSON.stringify(res.body));
    sendIds.push(res.body.sendId);
    contactIds.push(res.body.leadId);
  }
  // The third contact opted out after the message went out: its checks would now stop it.
  await setContactFlags(t.db, tenant.accountId, contactIds[2]!, { optedOut: true });
  const past = Date.now() - 60_000;
  await t.db.kysely
    .updateTable('sends')
    .set({ status: 'sending', attempts: 1, lease_until: past, updated_at: past })
    .where('id', 'in', sendIds)
    .execute();
  return { emails, sendIds };
}

test('a send the server accepted before its worker died is recorded sent from the journal (even if its contact opted out since), not sent again; one without a note goes out', {
  skip: onPostgres && 'SQLite only: PostgreSQL keeps no journal (its workers may share no disk)',
  timeout: 60_000,
}, async () => {
  const { emails, sendIds } = await sendsOfADeadWorker();
  const [noted, unnoted, notedOptedOut] = sendIds as [string, string, string];
  const path = journalPathOf(t.config)!;
  const journal = new AcceptanceJournal(path);
  const acceptedAt = Date.now() - 61_000;
  journal.add([
    { sendId: noted, to: emails[0]!, messageId: '<before-the-crash@herald.test>', delivered: true, acceptedAt },
    { sendId: notedOptedOut, to: emails[2]!, messageId: '<also-before@herald.test>', delivered: true, acceptedAt },
  ]);
  journal.close();

  const worker = startHeraldProcess('worker', {
    DATA_DIR: t.config.dataDir,
    HERALD_SECRET: t.config.secret,
    SMTP_URL: sink.url,
    SMTP_THREAD: 'true',
  });
  workers.push(worker);
  await eventually(async () => (await sendRow(t.db, unnoted)).status === 'sent', 30_000, 'the send without a note to go out');
  await eventually(async () => (await sendRow(t.db, noted)).status === 'sent', 30_000, 'the noted send to be recorded');
  await eventually(async () => (await sendRow(t.db, notedOptedOut)).status !== 'sending', 30_000, 'the opted-out one to be settled');
  await worker.stop();

  const recorded = await sendRow(t.db, noted);
  assert.equal(recorded.provider_message_id, '<before-the-crash@herald.test>');
  assert.equal(recorded.to_address, emails[0]);
  assert.ok(recorded.delivered_at !== null, 'delivered');
  assert.equal(recorded.attempts, 2);
  const atSink = (email: string) => sink.messages.filter((m) => m.envelope.to.includes(email)).length;
  assert.equal(atSink(emails[0]!), 0, 'the noted message was not sent again');
  assert.equal(atSink(emails[1]!), 1, 'the other went out once');
  // The message is out: recorded sent whatever the checks say now, not Optout.
  const optedOut = await sendRow(t.db, notedOptedOut);
  assert.deepEqual([optedOut.status, optedOut.provider_message_id], ['sent', '<also-before@herald.test>']);
  assert.equal(atSink(emails[2]!), 0);

  // Both outcomes are written: the journal forgot them (the worker's thread told on its way out).
  assert.ok(existsSync(path));
  const after = new AcceptanceJournal(path);
  try {
    assert.deepEqual([...after.among(sendIds).keys()], []);
  } finally {
    after.close();
  }
});
