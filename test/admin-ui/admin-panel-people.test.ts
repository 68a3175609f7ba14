import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { createField, createKpi } from '../../src/modules/definitions/definitions.service.js';
import { login } from '../admin/helpers.js';
import { randomEmail } from '../helpers/factories.js';
import {
  addPanelUser,
  apiFromPage,
  fieldError,
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

/**
 * Users and contacts in a real browser (docs/admin-api.md, Users and Contacts): an administrator
 * changes a role and sets a password, a user changes their own, a contact is edited from its
 * page (errors on the field) and erased behind a typed confirmation.
 */

describe('admin panel: users, own password, contact edit and erase', { skip: panelBrowser.skip }, () => {
  let h: PanelHerald;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: PanelUser;
  let member: PanelUser;

  before(async () => {
    h = await startPanelHerald();
    admin = await makePanelAccount(h.db, { plan: 'free' });
    member = await addPanelUser(h.db, admin.accountId, admin.accountName, 'member');
    browser = await launchBrowser();
    context = await newPanelContext(browser, h.baseUrl);
    page = await context.newPage();
    await signIn(page, admin);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  const userRow = (email: string) => page.getByRole('row').filter({ hasText: email });

  test("an administrator makes a member an administrator from the users page, and sets that user's password", async () => {
    await page.goto('/admin/users');
    const changed = page.waitForResponse((r) => r.url().endsWith(`/users/${member.userId}`) && r.request().method() === 'PATCH');
    await page.getByLabel(`Role of ${member.email}`).selectOption('admin');
    assert.equal((await changed).status(), 204);
    const users = await apiFromPage(page, 'GET', '/admin/api/users');
    assert.equal(users.body.items.find((u: { email: string }) => u.email === member.email).role, 'admin');

    await userRow(member.email).getByRole('button', { name: 'Set password' }).click();
    const resetForm = page.getByRole('region', { name: `New password for ${member.email}` });
    await resetForm.getByLabel('New password', { exact: true }).fill('short');
    await resetForm.getByRole('button', { name: 'Set password' }).click();
    assert.match(await fieldError(page, 'New password'), /at least 8 characters/);
    await resetForm.getByLabel('New password', { exact: true }).fill('a password from the admin');
    await resetForm.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('status').filter({ hasText: 'has a new password' }).waitFor();
    await screenshot(page, 'people-01-users');
    assert.equal((await login(h.herald.app!, member.email, 'a password from the admin')).status, 200);
    member.password = 'a password from the admin';
  });

  test('a user changes their own password from their profile: a wrong current password shows on its field', async () => {
    const own = await browser.newContext({ baseURL: h.baseUrl, locale: 'en-GB', timezoneId: 'UTC' });
    const p = await own.newPage();
    try {
      await signIn(p, member);
      await p.getByRole('link', { name: 'Your profile' }).click();
      await p.getByRole('heading', { name: 'Your profile' }).waitFor();
      await p.getByLabel('Current password').fill('not my password');
      await p.getByLabel('New password').fill('my very own passphrase');
      await p.getByRole('button', { name: 'Change password' }).click();
      assert.match(await fieldError(p, 'Current password'), /not correct/);
      await p.getByLabel('Current password').fill(member.password);
      await p.getByLabel('New password').fill('my very own passphrase');
      await p.getByRole('button', { name: 'Change password' }).click();
      await p.getByRole('status').filter({ hasText: 'Your password is changed' }).waitFor();
      assert.equal((await apiFromPage(p, 'GET', '/admin/api/session')).status, 200, 'this session stays');
      assert.equal((await login(h.herald.app!, member.email, member.password)).status, 401);
      assert.equal((await login(h.herald.app!, member.email, 'my very own passphrase')).status, 200);
    } finally {
      await own.close();
    }
  });

  test('a contact is edited from its page: a wrong value shows on its field, a right one is saved', async () => {
    await createField(h.db, admin.accountId, { name: 'Birthday', type: 'date' });
    await createKpi(h.db, admin.accountId, { id: 'orders', name: 'Orders' });
    const { id } = await writeContact(h.db, admin.accountId, { email: randomEmail(), name: 'Ada Lovelace', tags: ['newsletter'] });
    await page.goto(`/admin/contacts/${id}`);
    await page.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByLabel('Birthday').fill('31/02/not-a-date');
    await page.getByRole('button', { name: 'Save contact' }).click();
    assert.match(await fieldError(page, 'Birthday'), /Birthday/);
    await page.getByLabel('Birthday').fill('10/12/1815');
    await page.getByLabel('Add tags').fill('Client VIP');
    await page.getByLabel('newsletter').check();
    await page.getByLabel('Add to Orders').fill('2.5');
    await page.getByRole('button', { name: 'Save contact' }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    const profile = (await apiFromPage(page, 'GET', `/admin/api/contacts/${id}`)).body;
    assert.deepEqual([profile.tags, profile.fields, profile.kpis], [['client-vip'], { Birthday: '1815-12-10' }, { orders: 2.5 }]);
    await screenshot(page, 'people-02-contact-edited');
  });

  test('a contact is erased behind a typed confirmation', async () => {
    const { id } = await writeContact(h.db, admin.accountId, { email: randomEmail(), name: 'Grace Hopper' });
    await page.goto(`/admin/contacts/${id}`);
    await page.getByRole('button', { name: 'Erase…' }).click();
    const confirm = page.getByRole('button', { name: 'Erase for good' });
    await page.getByLabel('Type Grace Hopper to confirm').fill('Grace');
    assert.equal(await confirm.isDisabled(), true);
    await page.getByLabel('Type Grace Hopper to confirm').fill('Grace Hopper');
    await screenshot(page, 'people-03-erase');
    await confirm.click();
    await page.waitForURL(/\/admin\/contacts$/);
    assert.equal((await apiFromPage(page, 'GET', `/admin/api/contacts/${id}`)).status, 404);
  });
});
