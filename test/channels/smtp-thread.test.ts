import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildMime } from '../../src/channels/email/mime.js';
import { smtpFailure, smtpPoolOptions } from '../../src/channels/email/smtp.js';
import { SmtpThreadPool } from '../../src/channels/email/smtp-pool.js';
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
    assert.deepEqual(await pool.send(message(1), '<m1@acme.test>'), { accepted: ['ada1@example.com'] });
    sink.refuseRecipient('ada2@example.com');
    const refused = await pool.send(message(2), '<m2@acme.test>').catch((err: Error) => err);
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
    const err = await pool.send(message(n), `<m${n}@acme.test>`).catch((e: Error) => e);
    assert.ok(err instanceof Error && /^smtp thread ended/.test(err.message), String(err));
    const failure = smtpFailure(err);
    assert.equal(failure.temporary, true);
    assert.match(failure.message, /^smtp server unreachable \(ECONNECTION\): smtp thread ended/);
  }
  await pool.close();
});
