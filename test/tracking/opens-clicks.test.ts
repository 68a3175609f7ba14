import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listActivity } from '../../src/modules/activity/activity.service.js';
import { readClickToken } from '../../src/modules/tracking/tracking-token.js';
import { deliverEmail, emailTenant, engagementsOf, type RunningHerald, startRunningHerald, stats } from './helpers.js';

/**
 * A recipient reads a campaign email: the mail client fetches the pixel, the reader follows
 * links. Real HTTP requests to the running service, from the links of the email it sent.
 */
let t: RunningHerald;
before(async () => {
  t = await startRunningHerald();
});
after(() => t.close());

const OFFER = (leadId: string) => `https://shop.example.com/offer?utm_source=herald&id=${leadId}#top`;

describe('open pixel', () => {
  test('answers 200 with a 1x1 GIF that no cache may keep', async () => {
    const tenant = await emailTenant(t);
    const { links } = await deliverEmail(t, tenant);
    assert.ok(links.pixel.startsWith(`${t.base}/t/o/`), links.pixel);
    const res = await fetch(links.pixel);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/gif');
    assert.match(res.headers.get('cache-control') ?? '', /no-store/);
    const gif = Buffer.from(await res.arrayBuffer());
    assert.equal(gif.subarray(0, 6).toString('latin1'), 'GIF89a');
    assert.deepEqual([gif.readUInt16LE(6), gif.readUInt16LE(8)], [1, 1], 'width and height');
  });

  test('every fetch counts as an open; unique opens count each send once', async () => {
    const tenant = await emailTenant(t);
    const first = await deliverEmail(t, tenant);
    const second = await deliverEmail(t, tenant);
    for (const pixel of [first.links.pixel, first.links.pixel, first.links.pixel, second.links.pixel])
      assert.equal((await fetch(pixel)).status, 200);
    const s = await stats(t, tenant.accountId, tenant.campaignId);
    assert.deepEqual([s.opens, s.uniqueOpens], [4, 2]);
    assert.deepEqual(await engagementsOf(t, first.sendId), [
      { kind: 'open', url: null },
      { kind: 'open', url: null },
      { kind: 'open', url: null },
    ]);
  });

  test('HEAD (link scanners, previews) is answered but not counted', async () => {
    const tenant = await emailTenant(t);
    const { links, sendId } = await deliverEmail(t, tenant);
    assert.equal((await fetch(links.pixel, { method: 'HEAD' })).status, 200);
    assert.equal((await fetch(links.clicks[0]!, { method: 'HEAD', redirect: 'manual' })).status, 302);
    assert.deepEqual(await engagementsOf(t, sendId), []);
  });
});

describe('click redirect', () => {
  test('every link of the template leads, through Herald, to exactly the address written', async () => {
    const tenant = await emailTenant(t);
    const { links, leadId } = await deliverEmail(t, tenant);
    // The offer and the blog post are tracked; mailto: and the unsubscribe link are not.
    assert.equal(links.clicks.length, 2, links.hrefs.join('\n'));
    assert.ok(links.hrefs.includes('mailto:help@example.com'));
    assert.ok(links.hrefs.some((h) => h.startsWith(`${t.base}/unsubscribe/`)));
    const locations = [];
    for (const click of links.clicks) {
      assert.ok(click.startsWith(`${t.base}/t/c/`), click);
      const res = await fetch(click, { redirect: 'manual' });
      assert.equal(res.status, 302);
      assert.match(res.headers.get('cache-control') ?? '', /no-store/);
      locations.push(res.headers.get('location'));
    }
    assert.deepEqual(locations, [OFFER(leadId), 'http://blog.example.com/post']);
  });

  test('each click counts; unique clicks count each send once', async () => {
    const tenant = await emailTenant(t);
    const first = await deliverEmail(t, tenant);
    const second = await deliverEmail(t, tenant);
    for (const click of [first.links.clicks[0]!, first.links.clicks[1]!, first.links.clicks[0]!, second.links.clicks[1]!]) {
      assert.equal((await fetch(click, { redirect: 'manual' })).status, 302);
    }
    const s = await stats(t, tenant.accountId, tenant.campaignId);
    assert.deepEqual([s.clicks, s.uniqueClicks, s.opens], [4, 2, 0]);
    assert.deepEqual(await engagementsOf(t, second.sendId), [{ kind: 'click', url: 'http://blog.example.com/post' }]);
  });

  test('a query string added to the click URL changes neither the target nor what is recorded', async () => {
    const tenant = await emailTenant(t);
    const { links, leadId, sendId } = await deliverEmail(t, tenant);
    const res = await fetch(`${links.clicks[0]}?url=https://evil.example.net/&redirect=https://evil.example.net/`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), OFFER(leadId));
    assert.deepEqual(await engagementsOf(t, sendId), [{ kind: 'click', url: OFFER(leadId) }]);
  });

  test('the token names the send and the target: signed, readable only with the server secret', async () => {
    const tenant = await emailTenant(t);
    const { links, sendId, leadId } = await deliverEmail(t, tenant);
    const token = links.clicks[0]!.split('/t/c/')[1]!;
    assert.deepEqual(readClickToken(t.config, token), { sendId, url: OFFER(leadId) });
    assert.equal(readClickToken({ secret: 'another-secret' }, token), undefined);
  });
});

describe('activity feed', () => {
  test("opens and clicks show in the contact's feed, newest first, with send, campaign and address", async () => {
    const tenant = await emailTenant(t);
    const { links, sendId, leadId } = await deliverEmail(t, tenant);
    await fetch(links.pixel);
    await new Promise((r) => setTimeout(r, 5)); // distinct milliseconds, so the order is the order of fetches
    await fetch(links.clicks[1]!, { redirect: 'manual' });
    const { items } = await listActivity(t.db, tenant.accountId, leadId);
    const engagement = items.filter((i) => i.kind === 'open' || i.kind === 'click');
    assert.deepEqual(
      engagement.map((i) => ({ ...i, at: undefined })),
      [
        { kind: 'click', at: undefined, sendId, campaignId: tenant.campaignId, url: 'http://blog.example.com/post' },
        { kind: 'open', at: undefined, sendId, campaignId: tenant.campaignId },
      ],
    );
    for (const item of engagement) assert.match(item.at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(items.at(-1)?.kind, 'send', 'the send itself came first');
  });

  test("another contact's feed shows none of them", async () => {
    const tenant = await emailTenant(t);
    const reader = await deliverEmail(t, tenant);
    const other = await deliverEmail(t, tenant);
    await fetch(reader.links.pixel);
    await fetch(reader.links.clicks[0]!, { redirect: 'manual' });
    const { items } = await listActivity(t.db, tenant.accountId, other.leadId);
    assert.deepEqual(
      items.map((i) => i.kind),
      ['send'],
    );
  });
});
