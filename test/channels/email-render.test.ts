import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DeliveryError } from '../../src/channels/channel.js';
import type { Campaign } from '../../src/modules/campaigns/campaign.js';
import type { ContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { EMAIL_FOOTER_TEXT, renderEmail } from '../../src/rendering/email.js';
import { htmlToText } from '../../src/rendering/html-to-text.js';

/** Pure rendering: no database, no SMTP. What a recipient would read. */
const URL = 'http://herald.test/unsubscribe/c25kXzAx.abcDEF123';

const contact: ContactProfile = {
  id: 'ld_01',
  name: 'Ada Lovelace',
  emails: ['ada@example.com', 'ada@work.example'],
  phones: ['+33612345678'],
  tags: ['vip', 'black-friday'],
  fields: { City: 'Lyon', 'Birth date': '1815-12-10' },
  kpis: { orders: 3 },
  metadata: { plan: 'gold', nested: { level: 2 } },
  notes: [],
  trackers: [],
  archived: false,
  optedOut: false,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

function campaign(email: Partial<Campaign['email']>): Campaign {
  return {
    id: 'cmp_01',
    accountId: 'acc_01',
    name: 'Welcome',
    channel: 'email',
    schedule: 'api',
    mode: 'immediate',
    delaySeconds: 0,
    reentry: false,
    cooldownDays: 0,
    active: true,
    email: { from: 'Acme <news@acme.test>', subject: 'Hi', html: null, text: null, ...email },
    whatsapp: { template: null, language: null, params: [] },
    webhooks: [],
    createdAt: 0,
    updatedAt: 0,
  };
}

const render = (email: Partial<Campaign['email']>, who: ContactProfile = contact) =>
  renderEmail({ campaign: campaign(email), contact: who, to: who.emails[0]!, sendId: 'snd_01', unsubscribeUrl: URL });

describe('email rendering', () => {
  test('personalises subject, HTML and text with name, fields, KPIs, tags, metadata and campaign', async () => {
    const email = await render({
      subject: '{{ contact.name }}, your {{ campaign.name }}',
      html: '<p>{{ contact.name }} from {{ contact.fields.City }} ({{ contact.fields.city }}): {{ contact.kpis.orders }} orders, {{ contact.tags | join: "+" }}, {{ contact.metadata.plan }}/{{ contact.metadata.nested.level }}</p>',
      text: '{{ contact.email }} {{ contact.phone }} {{ contact.emails.size }} {{ contact.fields["Birth date"] }} {{ contact.id }} {{ campaign.id }}',
    });
    assert.equal(email.subject, 'Ada Lovelace, your Welcome');
    assert.match(email.html!, /<p>Ada Lovelace from Lyon \(Lyon\): 3 orders, vip\+black-friday, gold\/2<\/p>/);
    assert.match(email.text, /^ada@example\.com \+33612345678 2 1815-12-10 ld_01 cmp_01/);
    assert.equal(email.from, 'Acme <news@acme.test>');
    assert.equal(email.to, 'ada@example.com');
  });

  test('a missing variable renders empty', async () => {
    const email = await render({
      subject: 'A[{{ contact.fields.nothing }}]B',
      html: '<p>[{{ nope.deeper }}]</p>',
      text: '[{{ contact.metadata.absent }}]',
    });
    assert.equal(email.subject, 'A[]B');
    assert.match(email.html!, /<p>\[\]<\/p>/);
    assert.match(email.text, /^\[\]/);
  });

  test('contact data is escaped in HTML, and left as is in text and subject', async () => {
    const evil = { ...contact, name: '<script>alert("x")</script> & Co' };
    const email = await render({ subject: '{{ contact.name }}', html: '<p>{{ contact.name }}</p>', text: '{{ contact.name }}' }, evil);
    assert.ok(!email.html!.includes('<script>'), email.html!);
    assert.match(
      email.html!,
      /&lt;script&gt;alert\(&#34;x&#34;\)&lt;\/script&gt; &amp; Co|&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; Co/,
    );
    assert.match(email.text, /^<script>alert\("x"\)<\/script> & Co/);
    assert.equal(email.subject, '<script>alert("x")</script> & Co');
  });

  test('a subject is one line even when data carries newlines', async () => {
    const email = await render(
      { subject: '{{ contact.metadata.plan }}', html: '<p>x</p>' },
      { ...contact, metadata: { plan: 'a\r\nBcc: x@evil.test' } },
    );
    assert.equal(email.subject, 'a Bcc: x@evil.test');
  });

  test('templates without {{ unsubscribe_url }} get a footer with the link in both parts', async () => {
    const email = await render({ html: '<html><body><p>Hello</p></body></html>', text: 'Hello' });
    assert.match(email.html!, new RegExp(`<a href="${escapeRe(URL)}">${EMAIL_FOOTER_TEXT.link}</a></p>\\n</body></html>$`));
    assert.ok(email.text.endsWith(`${EMAIL_FOOTER_TEXT.text} ${URL}\n`), email.text);
  });

  test('templates that place {{ unsubscribe_url }} get no footer', async () => {
    const email = await render({ html: '<p><a href="{{ unsubscribe_url }}">Stop</a></p>', text: 'Stop: {{ unsubscribe_url }}' });
    assert.equal(email.html, `<p><a href="${URL}">Stop</a></p>`);
    assert.equal(email.text, `Stop: ${URL}`);
    assert.ok(!email.html.includes(EMAIL_FOOTER_TEXT.html));
  });

  test('a part is judged on its own: the text part without the link gets the footer', async () => {
    const email = await render({ html: '<a href="{{ unsubscribe_url }}">Stop</a>', text: 'Hello' });
    assert.ok(!email.html!.includes(EMAIL_FOOTER_TEXT.html));
    assert.ok(email.text.includes(URL));
  });

  test('List-Unsubscribe and List-Unsubscribe-Post (RFC 8058) headers, and a Message-ID naming the send', async () => {
    const email = await render({ html: '<p>x</p>' });
    assert.deepEqual(email.headers, { 'List-Unsubscribe': `<${URL}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    assert.equal(email.messageId, '<snd_01@acme.test>');
  });

  test('HTML only: the text part is derived from the rendered HTML, links included', async () => {
    const email = await render({
      html: '<html><head><style>p{color:red}</style></head><body><h1>Hi {{ contact.name }}</h1><p>See <a href="https://acme.test/a?x=1&amp;y=2">our offer</a>.</p><ul><li>One</li><li>Two</li></ul></body></html>',
    });
    assert.ok(email.html);
    const [body, footer] = email.text.split('\n\n--\n');
    assert.equal(body, 'Hi Ada Lovelace\n\nSee our offer (https://acme.test/a?x=1&y=2).\n\n- One\n- Two');
    assert.equal(footer, `${EMAIL_FOOTER_TEXT.text} ${URL}\n`);
  });

  test('text only: a text-only email', async () => {
    const email = await render({ text: 'Plain {{ contact.name }}' });
    assert.equal(email.html, null);
    assert.match(email.text, /^Plain Ada Lovelace\n\n--\n/);
  });

  test('a campaign without sender or body is a permanent failure', async () => {
    for (const settings of [
      { from: null, html: '<p>x</p>' },
      { html: null, text: null },
    ]) {
      const err = await render(settings).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof DeliveryError);
      assert.equal(err.temporary, false);
    }
  });

  test('a template never loads a file: include, render and layout fail for good, and no file text gets out', async () => {
    // As a template stored before such tags were refused on save would: the process's working
    // directory holds package.json, which Liquid's file tags would otherwise read.
    for (const tag of [
      "{% include 'package.json' %}",
      "{% if true %}{% render 'package.json' %}{% endif %}",
      "{% layout 'package.json' %}x",
    ]) {
      for (const part of ['subject', 'html', 'text'] as const) {
        const err = await render({ html: '<p>x</p>', [part]: tag }).then(
          (email) => email,
          (e: unknown) => e,
        );
        assert.ok(err instanceof DeliveryError, `${part}: ${tag}`);
        assert.equal(err.temporary, false);
        assert.match(err.message, /tag is not supported: templates cannot load other files/);
        assert.doesNotMatch(err.message, /herald/);
      }
    }
  });
});

describe('html to text', () => {
  test('decodes entities after removing tags, so escaped markup stays text', () => {
    assert.equal(htmlToText('<p>a &lt;b&gt; &amp; &#233;&#x20AC;&nbsp;c</p>'), 'a <b> & é€ c');
  });

  test('a link whose label is its address is shown once', () => {
    assert.equal(htmlToText('<a href="https://x.test/">https://x.test/</a>'), 'https://x.test/');
  });
});

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
