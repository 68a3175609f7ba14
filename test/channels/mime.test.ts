import assert from 'node:assert/strict';
import { test } from 'node:test';
import MailComposer from 'nodemailer/lib/mail-composer';
import { buildMime } from '../../src/channels/email/mime.js';

/**
 * The dispatcher builds MIME itself (one buffer, one turn) instead of letting nodemailer stream
 * it: the bytes must be exactly nodemailer's own for the same options, whatever the content.
 */
const words = 'word '.repeat(5000);
const BODIES: { name: string; text: string; html?: string }[] = [
  { name: 'short ASCII (7bit)', text: 'hello', html: '<p>hello</p>' },
  {
    name: 'accents, trailing whitespace, long lines (quoted-printable)',
    text: `héllo ${'x'.repeat(200)}  \n trailing   \n`,
    html: `<p>Ünï ${'y'.repeat(300)}</p>\n`,
  },
  { name: 'longer than an encoder slice', text: words, html: `<div>${words}</div>` },
  { name: 'mostly non-Latin (base64)', text: '日本語のテキスト'.repeat(300), html: `<p>${'日本語'.repeat(2000)}</p>` },
  { name: 'text only, bare CR and LF, whitespace-only line', text: `a\r\nb\rc\nd\t \t\n${' '.repeat(100)}` },
  { name: 'empty text part', text: '', html: '<p>x</p>' },
];

for (const body of BODIES) {
  test(`byte-identical to nodemailer's build: ${body.name}`, async () => {
    const options = {
      from: '"Acmé Co" <news@acme.test>',
      to: 'ada@example.com',
      subject: `Héllo ${'z'.repeat(100)}`,
      text: body.text,
      ...(body.html === undefined ? {} : { html: body.html }),
      messageId: '<snd_1@acme.test>',
      headers: { 'List-Unsubscribe': '<https://herald.test/u/abc>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      // Fixed so that two builds can be compared: nodemailer draws the boundary and the date.
      date: new Date(0),
      baseBoundary: 'fixed',
    };
    const expected = await new MailComposer(options).compile().build();
    const built = buildMime(options);
    assert.equal(built.raw.toString('latin1'), expected.toString('latin1'));
    assert.deepEqual(built.envelope, { from: 'news@acme.test', to: ['ada@example.com'] });
  });
}
