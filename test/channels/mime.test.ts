import assert from 'node:assert/strict';
import { test } from 'node:test';
import MailComposer from 'nodemailer/lib/mail-composer';
import { buildMime, buildPlain } from '../../src/channels/email/mime.js';

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

/**
 * The usual message (bare To, ASCII subject and headers) is written without a MIME tree
 * (buildPlain): the same bytes, whatever the bodies, the header lengths and the sender.
 */
const unsubscribe = (token: string) => ({
  'List-Unsubscribe': `<https://herald.test/u/${token}>`,
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
});
const SHAPES: { name: string; from: string; subject: string; headers: Record<string, string> }[] = [
  {
    name: 'named sender, short subject',
    from: '"Acmé Co" <news@acme.test>',
    subject: 'Your order has shipped',
    headers: unsubscribe('abc'),
  },
  { name: 'bare sender, empty subject', from: 'news@acme.test', subject: '', headers: unsubscribe('abc') },
  {
    name: 'long subject and long unsubscribe address (folded)',
    from: 'Acme <news@acme.test>',
    subject: `Hello there ${'word '.repeat(30).trim()}`,
    headers: unsubscribe('t'.repeat(150)),
  },
  { name: 'a test send header', from: 'news@acme.test', subject: '[Test] Hi', headers: { ...unsubscribe('x'), 'X-Herald-Test': 'true' } },
];

for (const shape of SHAPES) {
  for (const body of BODIES.filter((b) => b.text !== '')) {
    test(`plain path, byte-identical to nodemailer: ${shape.name}; ${body.name}`, async () => {
      const options = {
        from: shape.from,
        to: 'ada.lovelace+news@example.com',
        subject: shape.subject,
        text: body.text,
        ...(body.html === undefined ? {} : { html: body.html }),
        messageId: '<snd_01HZX@acme.test>',
        headers: shape.headers,
        date: new Date(1_700_000_000_000),
        baseBoundary: 'fixed',
      };
      const expected = await new MailComposer(options).compile().build();
      const built = buildPlain(options);
      assert.ok(built, 'takes the plain path');
      assert.equal(built.raw.toString('latin1'), expected.toString('latin1'));
      assert.deepEqual(built.envelope, { from: 'news@acme.test', to: ['ada.lovelace+news@example.com'] });
      assert.deepEqual(buildMime(options), built);
    });
  }
}

test('anything the plain path does not write exactly goes through the MIME tree', () => {
  const base = { from: 'news@acme.test', to: 'ada@example.com', subject: 'Hi', text: 'x', messageId: '<snd_1@acme.test>' };
  for (const odd of [
    { to: 'Ada <ada@example.com>' },
    { to: 'ada@Example.com' },
    { subject: 'Héllo' },
    { subject: 'say "hi"' },
    { subject: '=?utf-8?Q?x?=' },
    { subject: 'tab\there' },
    { text: '' },
    { headers: { 'List-Unsubscribe': '<https://herald.test/u/é>' } },
    { headers: { 'x-lower': 'a' } },
  ]) {
    assert.equal(buildPlain({ ...base, ...odd }), undefined, JSON.stringify(odd));
  }
  assert.ok(buildPlain(base));
});
