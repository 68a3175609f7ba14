import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { createField } from '../../src/modules/definitions/definitions.service.js';
import { randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign } from '../helpers/herald.js';
import {
  addPanelUser,
  apiFromPage,
  launchBrowser,
  makePanelAccount,
  newPanelContext,
  type PanelHerald,
  type PanelUser,
  panelBrowser,
  screenshot,
  signIn,
  startPanelHerald,
} from './panel.js';

/** Roles, tenants, CSRF, and the panel on a narrow screen with the keyboard only. */
describe('admin panel: who sees what, and what is refused', { skip: panelBrowser.skip }, () => {
  let h: PanelHerald;
  let browser: Browser;
  let admin: PanelUser;
  let member: PanelUser;
  let other: { campaignId: string; contactId: string };

  before(async () => {
    h = await startPanelHerald();
    admin = await makePanelAccount(h.db);
    member = await addPanelUser(h.db, admin.accountId, admin.accountName, 'member');
    // Another account, with a campaign and a contact of its own.
    const stranger = await makePanelAccount(h.db);
    const campaign = await makeEmailCampaign(h, stranger.accountId);
    const contact = await writeContact(h.db, stranger.accountId, { email: randomEmail(), name: 'Someone Else' });
    other = { campaignId: campaign.id, contactId: contact.id };
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  async function pageFor(user: PanelUser, viewport?: { width: number; height: number }): Promise<Page> {
    const context = await newPanelContext(browser, h.baseUrl, viewport);
    const page = await context.newPage();
    await signIn(page, user);
    return page;
  }

  test('a member does not see the API keys or users pages, and the keys API answers 403', async () => {
    const page = await pageFor(member);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Campaigns' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'API keys' }).count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'Users' }).count(), 0);

    await page.goto('/admin/keys');
    await page.getByRole('heading', { name: 'Administrators only' }).waitFor();
    const keys = await apiFromPage(page, 'GET', '/admin/api/keys');
    assert.equal(keys.status, 403);
    assert.equal(keys.body.message, 'Administrators only');
    const create = await apiFromPage(page, 'POST', '/admin/api/keys', { body: { name: 'sneaky', scopes: ['leads:write'] }, csrf: true });
    assert.equal(create.status, 403);

    // Everything else works for a member.
    await page.goto('/admin/fields');
    await page.getByRole('heading', { name: 'Custom fields', level: 1 }).waitFor();
    await page.context().close();
  });

  test("another account's campaign and contact answer 404, in the panel and in its API", async () => {
    const page = await pageFor(admin);
    await page.goto(`/admin/campaigns/${other.campaignId}`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await page.getByText('Campaign not found').waitFor();
    await screenshot(page, '20-not-found');
    await page.goto(`/admin/contacts/${other.contactId}`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();

    for (const path of [
      `/admin/api/campaigns/${other.campaignId}`,
      `/admin/api/campaigns/${other.campaignId}/stats`,
      `/admin/api/contacts/${other.contactId}`,
      `/admin/api/contacts/${other.contactId}/activity`,
    ]) {
      assert.equal((await apiFromPage(page, 'GET', path)).status, 404, path);
    }
    const patch = await apiFromPage(page, 'PATCH', `/admin/api/campaigns/${other.campaignId}`, { body: { active: false }, csrf: true });
    assert.equal(patch.status, 404);
    const note = await apiFromPage(page, 'POST', `/admin/api/contacts/${other.contactId}/notes`, { body: { text: 'hello' }, csrf: true });
    assert.equal(note.status, 404);
    await page.context().close();
  });

  test('a write without the CSRF token is refused: a fetch without the header, and a plain HTML form post', async () => {
    const page = await pageFor(admin);
    const fetched = await apiFromPage(page, 'POST', '/admin/api/fields', { body: { name: 'csrf_fetch', type: 'string' } });
    assert.equal(fetched.status, 403);
    assert.equal(fetched.body.message, 'Invalid CSRF token');

    // A form post (what another site could make the browser send): the session cookie goes
    // along on the same site, the token cannot.
    await page.setContent(
      `<form method="post" action="${h.baseUrl}/admin/api/fields"><input name="name" value="csrf_form"><input name="type" value="string"><button>Go</button></form>`,
    );
    const [response] = await Promise.all([
      page.waitForResponse(`${h.baseUrl}/admin/api/fields`),
      page.getByRole('button', { name: 'Go' }).click(),
    ]);
    assert.equal(response.status(), 403, 'refused before the body is read');

    await page.goto('/admin/fields');
    const list = await apiFromPage(page, 'GET', '/admin/api/fields');
    assert.deepEqual(list.body.items, [], 'nothing was created');
    // With the token the same write works (the refusal was the token's doing).
    const ok = await apiFromPage(page, 'POST', '/admin/api/fields', { body: { name: 'csrf_ok', type: 'string' }, csrf: true });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await page.context().close();
  });

  test('on a narrow screen the menu opens and the panel is usable with the keyboard alone', async () => {
    await createField(h.db, admin.accountId, { name: 'Plan', type: 'string' });
    const page = await pageFor(admin, { width: 390, height: 844 });
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.isVisible(), false, 'the menu starts closed');
    await screenshot(page, '21-narrow-campaigns');

    // Keyboard only, from a fresh load: skip link first, then the menu button, then a link.
    await page.reload();
    await menu.waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-controls')), 'main-nav');
    await page.keyboard.press('Enter');
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    await nav.waitFor({ state: 'visible' });
    await screenshot(page, '22-narrow-menu');
    let guard = 0;
    while ((await page.evaluate(() => document.activeElement?.textContent?.trim())) !== 'Custom fields') {
      await page.keyboard.press('Tab');
      assert.ok(++guard < 20, 'Custom fields is reachable with Tab');
    }
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/admin\/fields$/);
    await nav.waitFor({ state: 'hidden' }); // the menu closes after navigating
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1'); // focus moves to the new page's heading
    await page.getByRole('button', { name: 'Rename field Plan' }).waitFor(); // the field's row is listed
    await screenshot(page, '23-narrow-fields');

    // A form with the keyboard: Tab to the field, type, Enter.
    guard = 0;
    while ((await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent)) !== 'Name') {
      await page.keyboard.press('Tab');
      assert.ok(++guard < 10, 'the Name field is reachable with Tab');
    }
    await page.keyboard.type('Birthday');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Rename field Birthday' }).waitFor();
    await page.context().close();
  });
});
