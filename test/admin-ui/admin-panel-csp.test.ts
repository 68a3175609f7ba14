import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { campaignStats } from '../../src/modules/campaigns/campaigns.service.js';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { createSegment } from '../../src/modules/segments/segments.service.js';
import { makeKey, randomEmail } from '../helpers/factories.js';
import { eventually, makeEmailCampaign } from '../helpers/herald.js';
import { freePort } from '../tracking/helpers.js';
import {
  launchBrowser,
  makePanelAccount,
  newPanelContext,
  type PanelHerald,
  type PanelUser,
  panelBrowser,
  publicApi,
  signIn,
  startPanelHerald,
} from './panel.js';

/**
 * The panel under its Content-Security-Policy in Chromium (decisions.md, Admin panel): every page
 * works with no violation, emails keep their styles in the message frame, and looking at a sent
 * email three times counts no open and no click.
 */

/** An email with what marketing HTML has: a style block, inline styles, a link, an image. */
const HTML = `<html><head><style>.lead { color: rgb(1, 2, 3); }</style></head><body>
<p class="lead" style="font-size: 31px">Hello {{ contact.name }}</p>
<p><a href="https://shop.example.com/offer?id=7">See the offer</a></p>
<img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" alt="dot">
</body></html>`;

describe('admin panel under its Content-Security-Policy', { skip: panelBrowser.skip }, () => {
  let h: PanelHerald;
  let browser: Browser;
  let page: Page;
  let admin: PanelUser;
  let ids: { campaign: string; contact: string; segment: string; outbox: string; send: string };
  /** Every CSP violation Chromium reported, in any frame: console lines and violation events. */
  const violations: string[] = [];

  before(async () => {
    // PUBLIC_URL is this server: the tracking addresses in the email are live.
    const port = await freePort();
    h = await startPanelHerald({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    admin = await makePanelAccount(h.db);
    const campaign = await makeEmailCampaign(h, admin.accountId, { name: 'Styled', subject: 'Styled for {{ contact.name }}', html: HTML });
    const contact = await writeContact(h.db, admin.accountId, { email: randomEmail(), name: 'Grace Hopper', tags: ['vip'] });
    const segment = await createSegment(h.db, admin.accountId, { name: 'VIPs', criteria: { tags: ['vip'] } });
    const { key } = await makeKey(h.db, h.config, admin.accountId);
    const trigger = await publicApi(h.baseUrl, key, '/api/campaigns/trigger', {
      campaignId: campaign.id,
      lead: { email: randomEmail(), name: 'Ada Lovelace' },
    });
    assert.equal(trigger.status, 200, JSON.stringify(trigger.body));
    const outbox = await eventually(
      () => h.db.kysely.selectFrom('outbox_messages').select('id').where('send_id', '=', trigger.body.sendId).executeTakeFirst(),
      10_000,
      'the email in the outbox',
    );
    ids = { campaign: campaign.id, contact: contact.id, segment: segment.id, outbox: outbox.id, send: trigger.body.sendId };

    browser = await launchBrowser();
    const context = await newPanelContext(browser, h.baseUrl);
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(`CSP violation event: ${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to|CSP violation/i.test(message.text())) violations.push(`${page.url()}: ${message.text()}`);
    });
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  /** Opens a panel address and waits until its page has drawn its heading and settled. */
  async function visit(path: string, heading: string | RegExp): Promise<void> {
    await page.goto(`/admin${path}`);
    await page.getByRole('heading', { name: heading, level: 1 }).first().waitFor();
    await page.waitForLoadState('networkidle');
  }

  test('every page of the panel works with no CSP violation', async () => {
    await page.goto('/admin/');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await signIn(page, admin);
    const pages: [string, string | RegExp][] = [
      ['/campaigns', 'Campaigns'],
      ['/campaigns/new', /New campaign/],
      [`/campaigns/${ids.campaign}`, 'Styled'],
      [`/campaigns/${ids.campaign}?tab=statistics`, 'Styled'],
      ['/contacts', 'Contacts'],
      [`/contacts/${ids.contact}`, /Grace Hopper/],
      ['/segments', 'Segments'],
      ['/segments/new', /New segment/],
      [`/segments/${ids.segment}`, /VIPs/],
      ['/outbox', 'Outbox'],
      [`/outbox/${ids.outbox}`, /Styled for Ada Lovelace/],
      ['/fields', 'Custom fields'],
      ['/kpis', /KPI/],
      ['/keys', 'API keys'],
      ['/users', 'Users'],
      ['/account', admin.accountName],
      ['/profile', 'Your profile'],
      ['/no-such-page', /not found/i],
    ];
    for (const [path, heading] of pages) await visit(path, heading);
    assert.deepEqual(violations, []);
  });

  test('a campaign preview and a kept email keep their own styles in the message frame, with no violation', async () => {
    await visit(`/campaigns/${ids.campaign}`, 'Styled');
    await page.getByLabel('Preview for contact').fill('Grace');
    await page.getByRole('radio', { name: /Grace Hopper/ }).check();
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    const preview = page.frameLocator('iframe[title="Rendered HTML preview"]').getByText('Hello Grace Hopper');
    await preview.waitFor();
    assert.deepEqual(await preview.evaluate((p) => [getComputedStyle(p).color, getComputedStyle(p).fontSize]), ['rgb(1, 2, 3)', '31px']);

    await visit(`/outbox/${ids.outbox}`, /Styled for Ada Lovelace/);
    const kept = page.frameLocator('iframe[title="Message HTML"]').getByText('Hello Ada Lovelace');
    await kept.waitFor();
    assert.deepEqual(await kept.evaluate((p) => [getComputedStyle(p).color, getComputedStyle(p).fontSize]), ['rgb(1, 2, 3)', '31px']);
    await page.waitForLoadState('networkidle');
    assert.deepEqual(violations, []);
  });

  test('viewing a sent email three times counts no open and no click; its links are the original ones', async () => {
    const before = await campaignStats(h.db, admin.accountId, ids.campaign);
    for (let view = 0; view < 3; view++) {
      await visit(`/outbox/${ids.outbox}`, /Styled for Ada Lovelace/);
      const frame = page.frameLocator('iframe[title="Message HTML"]');
      await frame.getByText('Hello Ada Lovelace').waitFor();
      assert.equal(await frame.getByRole('link', { name: 'See the offer' }).getAttribute('href'), 'https://shop.example.com/offer?id=7');
      assert.equal(await frame.locator(`img[src*="/t/o/"]`).count(), 0, 'no open pixel');
      await page.waitForLoadState('networkidle');
    }
    const after = await campaignStats(h.db, admin.accountId, ids.campaign);
    assert.deepEqual(
      [after.opens, after.uniqueOpens, after.clicks, after.uniqueClicks],
      [before.opens, before.uniqueOpens, before.clicks, before.uniqueClicks],
    );
    assert.deepEqual([after.opens, after.clicks], [0, 0]);
    assert.deepEqual(await h.db.kysely.selectFrom('engagements').select('kind').where('send_id', '=', ids.send).execute(), []);
  });
});
