import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildMime } from '../../src/channels/email/mime.js';
import { smtpFailure, smtpPoolOptions } from '../../src/channels/email/smtp.js';
import { SmtpThreadPool } from '../../src/channels/email/smtp-pool.js';
import { AcceptanceJournal } from '../../src/db/acceptance-journal.js';
import { SmtpSink } from '../fakes/smtp-sink.js';

/**
 * The SMTP pool's thread (docs/decisions.md, "The SMTP pool on its own thread"): what crosses
 * to it and back, and what happens when it ends. Delivery itself is test/channels/smtp.test.ts.
 */
let sink: SmtpSink;
before(async () => {
  sink = await SmtpSink.start();
});
after(() => sink.close());

const message = (n: number) =>
  buildMime({
    from: 'Acme <news@acme.test>',
    to: `ada${n}@example.com`,
    subject: `Hello ${n}`,
    text: `Hi ${n}`,
    messageId: `<m${n}@acme.test>`,
  });

test("the server's answer crosses back: accepted recipients, and a refusal with its reply code and command", {
  timeout: 15_000,
}, async () => {
  const pool = new SmtpThreadPool(smtpPoolOptions({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, smtpPoolSize: 2 }));
  try {
    assert.deepEqual(await pool.send(message(1), '<m1@acme.test>', 'snd_1'), { accepted: ['ada1@example.com'] });
    sink.refuseRecipient('ada2@example.com');
    const refused = await pool.send(message(2), '<m2@acme.test>', 'snd_2').catch((err: Error) => err);
    assert.ok(refused instanceof Error);
    const failure = smtpFailure(refused);
    assert.deepEqual(
      { temporary: failure.temporary, addressRefused: failure.addressRefused, message: failure.message },
      { temporary: false, addressRefused: true, message: 'smtp 550: 5.1.1 No such user here' },
    );
    const received = await sink.waitFor(1);
    assert.equal(received.at(-1)?.messageId, '<m1@acme.test>');
  } finally {
    await pool.close();
  }
});

test('a thread that ends fails the send it held as a lost connection (temporary), and the next send starts another', {
  timeout: 15_000,
}, async () => {
  // An SMTP_URL that nodemailer cannot parse (config.ts refuses it; here it makes the thread die at its start).
  const pool = new SmtpThreadPool({ url: 'smtp://[::1', pool: true });
  for (const n of [1, 2]) {
    const err = await pool.send(message(n), `<m${n}@acme.test>`, `snd_${n}`).catch((e: Error) => e);
    assert.ok(err instanceof Error && /^smtp thread ended/.test(err.message), String(err));
    const failure = smtpFailure(err);
    assert.equal(failure.temporary, true);
    assert.match(failure.message, /^smtp server unreachable \(ECONNECTION\): smtp thread ended/);
  }
  await pool.close();
});

test('with a journal the thread notes each acceptance before it answers (owner-only file), not a refusal, and forgets it once its outcome is recorded', {
  timeout: 15_000,
}, async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'herald-journal-')), 'smtp-accepted.db');
  const pool = new SmtpThreadPool(
    smtpPoolOptions({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, smtpPoolSize: 2 }),
    new AcceptanceJournal(path),
  );
  try {
    await pool.send(message(3), '<m3@acme.test>', 'snd_3');
    sink.refuseRecipient('ada4@example.com');
    await pool.send(message(4), '<m4@acme.test>', 'snd_4').catch(() => undefined);
    const noted = pool.deliveredAmong(['snd_3', 'snd_4']);
    assert.deepEqual([...noted.keys()], ['snd_3']);
    const { acceptedAt, ...entry } = noted.get('snd_3')!;
    assert.deepEqual(entry, { sendId: 'snd_3', to: 'ada3@example.com', messageId: '<m3@acme.test>', delivered: true });
    assert.ok(Math.abs(acceptedAt - Date.now()) < 5_000);
    assert.equal(statSync(path).mode & 0o777, 0o600, 'it holds addresses: readable by its owner only');
    pool.recorded('snd_3');
  } finally {
    await pool.close();
  }
  const journal = new AcceptanceJournal(path);
  try {
    assert.equal(journal.among(['snd_3']).size, 0, 'forgotten');
  } finally {
    journal.close();
  }
});
