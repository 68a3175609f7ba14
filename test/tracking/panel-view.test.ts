import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appendPixel, untrackHtml } from '../../src/modules/tracking/email-links.js';
import { clickUrl, openPixelUrl } from '../../src/modules/tracking/tracking-token.js';
import { signedIn } from '../admin/helpers.js';
import { deliverEmail, emailTenant, engagementsOf, type RunningHerald, startRunningHerald, stats } from './helpers.js';

/**
 * Looking at a sent email in the admin panel must never count an open or a click: the panel's
 * view of it has no open pixel and the original links (decisions.md, Admin panel).
 */
let t: RunningHerald;
before(async () => {
  t = await startRunningHerald();
});
after(() => t.close());

const attributes = (html: string, name: string) =>
  [...html.matchAll(new RegExp(`\\b${name}=["']([^"']+)["']`, 'g'))].map((m) => m[1]!.replace(/&amp;/g, '&'));

describe("the panel's view of a sent email", () => {
  test('has no open pixel and the original links; viewing it three times counts nothing', async () => {
    const tenant = await emailTenant(t);
    const sent = await deliverEmail(t, tenant);
    const { panel } = await signedIn(t, { accountId: tenant.accountId });
    const outboxId = sent.message.id;

    for (let view = 0; view < 3; view++) {
      const res = await panel.get(`/outbox/${outboxId}`);
      assert.equal(res.status, 200);
      const html: string = res.body.html;
      assert.ok(!html.includes('/t/o/') && !html.includes('/t/c/'), `no tracking address in the view:\n${html}`);
      assert.deepEqual(attributes(html, 'src'), [], 'no open pixel');
      const hrefs = attributes(html, 'href');
      assert.deepEqual(hrefs.slice(0, 3), [
        `https://shop.example.com/offer?utm_source=herald&id=${sent.leadId}#top`,
        'http://blog.example.com/post',
        'mailto:help@example.com',
      ]);
      assert.ok(hrefs[3]!.startsWith(`${t.base}/unsubscribe/`), 'the unsubscribe link is shown as sent');
      assert.match(html, /Hi Katherine Johnson/);
      // Whatever the view names on this server, fetched as a browser showing it would.
      for (const url of [...attributes(html, 'src'), ...hrefs].filter((u) => u.startsWith(t.base))) await (await fetch(url)).arrayBuffer();
    }

    const s = await stats(t, tenant.accountId, tenant.campaignId);
    assert.deepEqual([s.opens, s.uniqueOpens, s.clicks, s.uniqueClicks], [0, 0, 0, 0]);
    assert.deepEqual(await engagementsOf(t, sent.sendId), []);
    // The kept message itself is what was sent, tracking and all.
    assert.ok(sent.message.html!.includes(`${t.base}/t/o/`));
  });
});

describe('untrackHtml', () => {
  const config = { publicUrl: 'https://herald.example.com', secret: 'x'.repeat(32) };

  test('removes the pixel appendPixel wrote, and nothing else of the markup', () => {
    const body = '<html><body><p>Hi</p><img src="https://cdn.example.com/logo.png" width="1" height="1" alt="" style="x">\n</body></html>';
    assert.equal(untrackHtml(appendPixel(body, openPixelUrl(config, 'snd_1')), config), body);
  });

  test('an expired click link still shows its target; a link we cannot read, or a pasted pixel elsewhere, becomes about:blank', () => {
    const longAgo = Date.UTC(2000, 0, 1);
    const expired = clickUrl(config, 'snd_1', 'https://shop.example.com/a?x=1&y=2', longAgo);
    const forged = `${config.publicUrl}/t/c/eyJmb3JnZWQiOnRydWV9.AAAA`;
    const pixel = openPixelUrl(config, 'snd_2');
    const html = [
      `<a href="${expired}">Old offer</a>`,
      `<a href='${forged}'>Forged</a>`,
      `<div style="background:url(${pixel})">Styled</div>`,
      `<IMG alt=">" SRC="${pixel.replace('https://herald.example.com', 'HTTPS://Herald.Example.com')}">`,
      `<img src="https://cdn.example.com/logo.png" alt="Logo">`,
      `<img src="https://other.example.com/t/o/abc">`,
    ].join('\n');
    assert.equal(
      untrackHtml(html, config),
      [
        `<a href="https://shop.example.com/a?x=1&amp;y=2">Old offer</a>`,
        `<a href='about:blank'>Forged</a>`,
        `<div style="background:url(about:blank)">Styled</div>`,
        `<IMG alt=">" SRC="about:blank">`,
        `<img src="https://cdn.example.com/logo.png" alt="Logo">`,
        `<img src="https://other.example.com/t/o/abc">`,
      ].join('\n'),
    );
  });

  test('HTML without tracking is left byte for byte', () => {
    const html = `<!--[if mso]><v:roundrect href="https://a.example.com/"></v:roundrect><![endif]--><p style='x'>Hi &amp; bye</p>`;
    assert.equal(untrackHtml(html, config), html);
  });
});
