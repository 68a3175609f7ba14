import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Campaign } from '../../src/modules/campaigns/campaign.js';
import type { ContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { emailTracking } from '../../src/modules/tracking/email-links.js';
import { MAX_TRACKED_URL_LENGTH, readClickToken, readOpenToken } from '../../src/modules/tracking/tracking-token.js';
import { renderEmail } from '../../src/rendering/email.js';

/** The renderer with tracking: which links become click redirects, and where the pixel goes. Pure, no I/O. */
const config = { publicUrl: 'https://t.herald.test', secret: 'links-test-secret' };
const UNSUBSCRIBE = 'https://t.herald.test/unsubscribe/c25kXzAx.abc';

const contact: ContactProfile = {
  id: 'ld_01',
  name: 'Ada',
  emails: ['ada@example.com'],
  phones: [],
  tags: [],
  fields: {},
  kpis: {},
  metadata: { link: 'https://docs.example.com/a b?q="x"' },
  notes: [],
  trackers: [],
  archived: false,
  optedOut: false,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

function campaign(html: string | null, text: string | null = null): Campaign {
  return {
    id: 'cmp_01',
    accountId: 'acc_01',
    name: 'C',
    channel: 'email',
    schedule: 'api',
    mode: 'immediate',
    delaySeconds: 0,
    reentry: false,
    cooldownDays: 0,
    active: true,
    email: { from: 'Acme <news@acme.test>', subject: 'Hi', html, text },
    whatsapp: { template: null, language: null, params: [] },
    webhooks: [],
    createdAt: 0,
    updatedAt: 0,
  };
}

const render = (html: string | null, text: string | null = null) =>
  renderEmail({
    campaign: campaign(html, text),
    contact,
    to: 'ada@example.com',
    sendId: 'snd_01',
    unsubscribeUrl: UNSUBSCRIBE,
    tracking: emailTracking(config, 'snd_01'),
  });

/** Every href of the HTML, decoded as a browser reads the attribute. */
const hrefs = (html: string) => [...html.matchAll(/href=(["'])(.*?)\1/g)].map((m) => m[2]!.replace(/&amp;/g, '&'));
/** The hrefs but the unsubscribe footer's (added to any template that does not place the link). */
const links = (html: string) => hrefs(html).filter((h) => h !== UNSUBSCRIBE);

/** The target a click URL redirects to, or undefined when it is not one of ours. */
function target(href: string): string | undefined {
  const prefix = `${config.publicUrl}/t/c/`;
  if (!href.startsWith(prefix)) return undefined;
  const click = readClickToken(config, href.slice(prefix.length));
  assert.equal(click?.sendId, 'snd_01', 'the token names the send');
  return click!.url;
}

describe('click tracking in the HTML part', () => {
  test('every http(s) link becomes a click URL under PUBLIC_URL that leads to the address written, entities decoded', async () => {
    const email = await render(`<p><a href="https://shop.example.com/o?a=1&amp;b=2#top">one</a>
<a class="x" href='HTTP://Blog.Example.com/p'>two</a> <a href=https://bare.example.com/x>three</a>
<area shape="rect" href="https://map.example.com/" alt=""> <a title="see > here" href="https://gt.example.com/">four</a></p>`);
    assert.deepEqual(links(email.html!).map(target), [
      'https://shop.example.com/o?a=1&b=2#top',
      // The WHATWG form of the same address (a valid, ASCII Location header).
      'http://blog.example.com/p',
      'https://bare.example.com/x',
      'https://map.example.com/',
      'https://gt.example.com/',
    ]);
    assert.match(email.html!, /<a class="x" href="https:\/\/t\.herald\.test\/t\/c\/[^"]+">two<\/a>/, 'other attributes stay as written');
  });

  test('links built from contact data are tracked too, in canonical form', async () => {
    const email = await render('<a href="{{ contact.metadata.link }}">doc</a>');
    assert.deepEqual(links(email.html!).map(target), ['https://docs.example.com/a%20b?q=%22x%22']);
  });

  test('the unsubscribe link, mailto:, tel:, anchors and relative links are left as written', async () => {
    const email = await render(
      '<a href="{{ unsubscribe_url }}">u</a><a href="mailto:a@b.test">m</a><a href="tel:+331">t</a><a href="#top">a</a><a href="/rel">r</a><a href="javascript:void(0)">j</a>',
    );
    assert.deepEqual(hrefs(email.html!), [UNSUBSCRIBE, 'mailto:a@b.test', 'tel:+331', '#top', '/rel', 'javascript:void(0)']);
  });

  test('only links are rewritten: images, stylesheets, comments, styles and scripts keep their addresses', async () => {
    const html = `<link rel="stylesheet" href="https://cdn.example.com/a.css"><img src="https://cdn.example.com/logo.png">
<!-- <a href="https://old.example.com/">old</a> --><style>a[href="https://s.example.com/"]{color:red}</style><script>var a='<a href="https://js.example.com/">'</script>
<a href="https://live.example.com/">live</a>`;
    const email = await render(html);
    for (const kept of [
      'https://cdn.example.com/a.css',
      'https://cdn.example.com/logo.png',
      '<a href="https://old.example.com/">',
      'a[href="https://s.example.com/"]',
      '<a href="https://js.example.com/">',
    ]) {
      assert.ok(email.html!.includes(kept), kept);
    }
    assert.ok(!email.html!.includes('"https://live.example.com/"'));
  });

  test('Outlook buttons inside conditional comments are tracked', async () => {
    const email = await render(
      '<!--[if mso]><v:roundrect href="https://button.example.com/" arcsize="10%"><center>Go</center></v:roundrect><![endif]-->',
    );
    assert.deepEqual(links(email.html!).map(target), ['https://button.example.com/']);
  });

  test('an address too long to carry in a token is left as written, still working', async () => {
    const long = `https://long.example.com/?q=${'x'.repeat(MAX_TRACKED_URL_LENGTH)}`;
    const email = await render(`<a href="${long}">long</a>`);
    assert.deepEqual(links(email.html!), [long]);
  });

  test('the text part keeps the plain addresses (derived from the HTML before tracking)', async () => {
    const email = await render('<p><a href="https://shop.example.com/o">offer</a></p>');
    assert.match(email.text, /^offer \(https:\/\/shop\.example\.com\/o\)/);
    assert.ok(!email.text.includes('/t/c/') && !email.text.includes('/t/o/'));
  });
});

describe('open pixel', () => {
  test('is the last element of the body, and its token names the send', async () => {
    const email = await render('<html><body><p>Hello</p></body></html>');
    const match = /<img src="(https:\/\/t\.herald\.test\/t\/o\/([^"]+))" width="1" height="1" alt=""[^>]*>\n<\/body><\/html>$/.exec(
      email.html!,
    );
    assert.ok(match, email.html!);
    assert.deepEqual(readOpenToken(config, match[2]!), { sendId: 'snd_01' });
    // After the unsubscribe footer, which is added first.
    assert.ok(email.html!.indexOf(UNSUBSCRIBE) < email.html!.indexOf('/t/o/'));
  });

  test('HTML without a body tag gets it at the very end; a text-only email gets none', async () => {
    assert.match((await render('<p>Hi</p>')).html!, /<img src="https:\/\/t\.herald\.test\/t\/o\/[^"]+"[^>]*>\n$/);
    const textOnly = await render(null, 'Hello');
    assert.equal(textOnly.html, null);
    assert.ok(!textOnly.text.includes('/t/o/'));
  });

  test('without tracking (a preview) nothing is added or rewritten', async () => {
    const email = await renderEmail({
      campaign: campaign('<a href="https://shop.example.com/">x</a>'),
      contact,
      to: 'ada@example.com',
      sendId: 'snd_01',
      unsubscribeUrl: UNSUBSCRIBE,
    });
    assert.ok(email.html!.startsWith('<a href="https://shop.example.com/">x</a>'));
    assert.ok(!email.html!.includes('/t/o/'));
  });
});
