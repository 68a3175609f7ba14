import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type { AxeResults } from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import { makeEmailCampaign, makeEvent, makeField, makeKey, makeKpi, makeSegment, randomEmail } from '../helpers/factories.js';
import { eventually } from '../helpers/herald.js';
import {
  addPanelUser,
  apiFromPage,
  launchBrowser,
  makePanelAccount,
  newPanelContext,
  type PanelHerald,
  type PanelUser,
  panelBrowser,
  publicApi,
  startPanelHerald,
} from './panel.js';

/**
 * Accessibility of every page of the panel (issue 13, point 11): axe-core runs on each route of
 * the panel's router, with real data on it, on a desktop and on a phone screen, and on the
 * sign-in page and the forms that open inside pages. A violation of impact serious or critical
 * fails the test (docs/decisions.md, Admin panel); on the phone, no page may scroll sideways.
 */

const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const GATED_IMPACTS = new Set(['serious', 'critical']);
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

interface Seeded {
  campaignId: string;
  contactId: string;
  segmentId: string;
  outboxId: string;
}

/**
 * Every path of the router in src/admin-ui/src/App.tsx, with the addresses that show it (a
 * campaign's tabs are addresses of their own). A route added there and not here fails the first test.
 */
const ROUTES: Record<string, (s: Seeded) => string[]> = {
  '/': () => ['/'],
  '/campaigns': () => ['/campaigns'],
  '/campaigns/new': () => ['/campaigns/new'],
  '/campaigns/:id': (s) => [
    `/campaigns/${s.campaignId}`,
    `/campaigns/${s.campaignId}?tab=statistics`,
    `/campaigns/${s.campaignId}?tab=webhooks`,
  ],
  '/contacts': () => ['/contacts'],
  '/contacts/import': () => ['/contacts/import'],
  '/contacts/:id': (s) => [`/contacts/${s.contactId}`],
  '/segments': () => ['/segments'],
  '/segments/new': () => ['/segments/new'],
  '/segments/:id': (s) => [`/segments/${s.segmentId}`],
  '/outbox': () => ['/outbox'],
  '/outbox/:id': (s) => [`/outbox/${s.outboxId}`],
  '/fields': () => ['/fields'],
  '/kpis': () => ['/kpis'],
  '/keys': () => ['/keys'],
  '/users': () => ['/users'],
  '/account': () => ['/account'],
  '/profile': () => ['/profile'],
  '*': () => ['/no-such-page'],
};

/** The paths of the panel's router, read from its source (every `<Route path="…"`). */
function routerPaths(): string[] {
  const source = readFileSync(new URL('../../src/admin-ui/src/App.tsx', import.meta.url), 'utf8');
  return [...source.matchAll(/<Route\s+path="([^"]+)"/g)].map((m) => m[1]!);
}

/**
 * axe's violations on the page as it is now: the gated ones as one readable line per failing
 * node, and the others (moderate, minor) by rule id, reported but not failing the test.
 */
async function axeCheck(page: Page, where: string): Promise<{ failures: string[]; ungated: string[] }> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE_SCRIPT });
  // The message frames show a customer's email, not the panel: their own content is not ours to
  // fix (the frame's title, on the panel's side, is still checked).
  const results = await page.evaluate(() =>
    (window as unknown as { axe: { run(ctx: Document, o: object): Promise<AxeResults> } }).axe.run(document, {
      iframes: false,
      resultTypes: ['violations'],
    }),
  );
  const gated = results.violations.filter((v) => GATED_IMPACTS.has(v.impact ?? ''));
  const failures = gated.flatMap((v) =>
    v.nodes.map(
      (n) =>
        `${where}: ${v.id} (${v.impact}) at ${n.target.join(' ')}: ${v.help}${n.failureSummary ? `; ${n.failureSummary.replace(/\s+/g, ' ')}` : ''}`,
    ),
  );
  const ungated = results.violations.filter((v) => !GATED_IMPACTS.has(v.impact ?? '')).map((v) => `${v.id} (${v.impact})`);
  return { failures, ungated };
}

/** Whether the page scrolls sideways: its width beyond the screen's, as a failure line. */
async function overflowFailures(page: Page, where: string, width: number): Promise<string[]> {
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  return scrollWidth <= width ? [] : [`${where}: the page is ${scrollWidth}px wide on a ${width}px screen`];
}

/** Opens `path` and waits until its data is drawn (no loading indicator, the network quiet, no error). */
async function open(page: Page, path: string): Promise<void> {
  await page.goto(`/admin${path}`);
  await page.locator('main h1').first().waitFor();
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await eventually(async () => (await page.locator('.loading').count()) === 0, 10_000, `${path} to finish loading`);
  // An error state would pass axe too, but the page with its data must be what is checked.
  assert.equal(await page.locator('.state--error').count(), 0, `${path} shows an error instead of its data`);
}

describe('admin panel: every page passes axe on a desktop and a phone', { skip: panelBrowser.skip }, () => {
  let h: PanelHerald;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let admin: PanelUser;
  const seeded: Seeded = { campaignId: '', contactId: '', segmentId: '', outboxId: '' };

  before(async () => {
    h = await startPanelHerald();
    receiver = await WebhookReceiver.start();
    admin = await makePanelAccount(h.db, { plan: 'pro' });
    const accountId = admin.accountId;
    await addPanelUser(h.db, accountId, admin.accountName, 'member');
    const key = await makeKey(h.db, h.config, accountId, { name: 'Shop back end' });
    await makeKey(h.db, h.config, accountId, { name: 'Old importer', active: false, expiresAt: Date.now() + 86_400_000 });
    await makeField(h.db, accountId, 'City', 'location');
    await makeKpi(h.db, accountId, 'ltv', 'Lifetime value');
    const campaign = await makeEmailCampaign(h, accountId, { name: 'Welcome', webhooks: [receiver.url('/hook')] });
    seeded.campaignId = campaign.id;

    // A contact with a long address (the narrow layout must wrap it), fields, a KPI, tags, an event and a send.
    const email = `ada.lovelace.${randomEmail()}`;
    const lead = await publicApi(h.baseUrl, key.key, '/api/leads', {
      email,
      name: 'Ada Lovelace',
      phone: '+33612345678',
      tags: ['VIP', 'black-friday'],
      fields: [{ key: 'city', value: 'Paris' }],
      kpis: { ltv: 120 },
    });
    assert.equal(lead.status, 200, JSON.stringify(lead.body));
    seeded.contactId = lead.body.id;
    await publicApi(h.baseUrl, key.key, '/api/leads', { email: randomEmail(), name: 'Grace Hopper' });
    await makeEvent(h.db, accountId, {
      type: 'purchase',
      leadId: seeded.contactId,
      value: '49.90',
      metadata: { plan: 'pro' },
      url: 'https://shop.example.com/cart?x=1',
    });
    receiver.respondWith(500);
    const trigger = await publicApi(h.baseUrl, key.key, '/api/campaigns/trigger', { campaignId: campaign.id, lead: email });
    assert.equal(trigger.status, 200, JSON.stringify(trigger.body));
    const segment = await makeSegment(h.db, accountId, { name: 'VIPs', criteria: { tags: ['vip'] } });
    seeded.segmentId = segment.id;
    await eventually(() => receiver.requests.length >= 1, 15_000, 'the webhook attempt');

    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await receiver?.close();
    await h?.close();
  });

  test("the test's route list is the router's", () => {
    assert.deepEqual(routerPaths().sort(), Object.keys(ROUTES).sort(), 'add the new route of App.tsx to ROUTES in this file');
  });

  for (const [name, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`${name} (${viewport.width}x${viewport.height}): the sign-in page, every route and the forms that open`, async (t) => {
      const context: BrowserContext = await newPanelContext(browser, h.baseUrl, viewport, { bypassCSP: true });
      const page = await context.newPage();
      const failures: string[] = [];
      const ungated = new Map<string, string[]>();
      const check = async (where: string) => {
        const axe = await axeCheck(page, where);
        failures.push(...axe.failures);
        for (const rule of axe.ungated) ungated.set(rule, [...(ungated.get(rule) ?? []), where]);
        if (viewport === PHONE) failures.push(...(await overflowFailures(page, where, viewport.width)));
      };
      try {
        await page.goto('/admin/');
        await page.getByRole('button', { name: 'Sign in' }).waitFor();
        await check('sign-in');
        await page.getByLabel('Email').fill(admin.email);
        await page.getByLabel('Password').fill(admin.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('navigation', { name: 'Main', includeHidden: true }).waitFor({ state: 'attached' });

        if (!seeded.outboxId) {
          const outbox = await eventually(
            async () => {
              const r = await apiFromPage(page, 'GET', `/admin/api/outbox?campaignId=${seeded.campaignId}`);
              return r.body.items?.[0];
            },
            15_000,
            'the triggered email in the outbox',
          );
          seeded.outboxId = outbox.id;
        }

        for (const route of Object.keys(ROUTES)) {
          for (const path of ROUTES[route]!(seeded)) {
            await open(page, path);
            await check(path);
          }
        }

        // The forms and states that open inside pages.
        if (viewport === PHONE) {
          await open(page, '/campaigns');
          await page.getByRole('button', { name: 'Menu' }).click();
          await page.getByRole('navigation', { name: 'Main' }).waitFor();
          await check('/campaigns with the menu open');
          await page.getByRole('button', { name: 'Menu' }).click();
        }
        await open(page, '/keys');
        await page.getByRole('button', { name: 'New API key' }).click();
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.locator('[aria-invalid="true"]').first().waitFor();
        await check('/keys, the new key form with its errors');
        await page.getByLabel('Name', { exact: true }).fill('Reporting');
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.getByLabel('Key value').waitFor();
        await check('/keys, the new key shown once');
        await page.getByRole('button', { name: 'Done' }).click();

        await open(page, '/campaigns/new');
        await page.getByRole('button', { name: 'Create campaign' }).click();
        await page.locator('[aria-invalid="true"]').first().waitFor();
        await check('/campaigns/new with its errors');

        await open(page, `/segments/${seeded.segmentId}`);
        await page.getByRole('button', { name: 'Delete', exact: true }).click();
        await page.getByRole('button', { name: 'Cancel' }).waitFor();
        await check(`/segments/${seeded.segmentId} asking to confirm the deletion`);
        await page.getByRole('button', { name: 'Cancel' }).click();
      } finally {
        await context.close();
      }
      for (const [rule, pages] of ungated) t.diagnostic(`not gated: ${rule} on ${pages.join(', ')}`);
      assert.deepEqual(failures, [], `accessibility failures on the ${name}:\n${failures.join('\n')}`);
    });
  }
});
