import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { makeContact, makeEmailCampaign, makeField, makeKpi, makeSegment } from '../helpers/factories.js';
import {
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
 * Issue 13, edit and delete what can be created: an administrator duplicates a campaign and
 * deletes it (with the confirm step), renames and deletes a custom field and a KPI.
 */

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

describe('admin panel: duplicate and delete a campaign, rename and delete fields and KPIs', { skip: panelBrowser.skip }, () => {
  let h: PanelHerald;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: PanelUser;

  before(async () => {
    h = await startPanelHerald();
    admin = await makePanelAccount(h.db, { plan: 'free' });
    browser = await launchBrowser();
    context = await newPanelContext(browser, h.baseUrl);
    page = await context.newPage();
    await signIn(page, admin);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  test('duplicates a campaign: the copy opens, inactive, with the same message and its own secret', async () => {
    const original = await makeEmailCampaign(h, admin.accountId, { name: 'Spring sale', subject: 'Spring is here, {{ contact.name }}' });
    await page.goto(`/admin/campaigns/${original.id}`);
    await page.getByRole('heading', { name: 'Spring sale', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { name: 'Spring sale (copy)', level: 1 }).waitFor();
    const copyId = (await page.getByTestId('campaign-id').textContent()) ?? '';
    assert.match(copyId, /^cmp_/);
    assert.notEqual(copyId, original.id);
    assert.ok(page.url().endsWith(`/admin/campaigns/${copyId}`), page.url());
    await page.getByRole('heading', { name: 'Campaign duplicated' }).waitFor();
    const secret = await page.getByLabel('Webhook signing secret').inputValue();
    assert.match(secret, /^whsec_/);
    assert.notEqual(secret, original.webhookSecret);
    assert.equal(await page.getByRole('button', { name: 'Activate', exact: true }).isVisible(), true, 'the copy is inactive');
    assert.equal(await page.getByLabel('Subject').inputValue(), 'Spring is here, {{ contact.name }}');
    await screenshot(page, 'edit-01-campaign-duplicated');
  });

  test('deletes a campaign after confirming: cancel keeps it, confirm removes it from the list', async () => {
    const campaign = await makeEmailCampaign(h, admin.accountId, { name: 'Old newsletter' });
    await page.goto(`/admin/campaigns/${campaign.id}`);
    await page.getByRole('heading', { name: 'Old newsletter', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    // Focus is on Cancel, the safe choice: Enter keeps the campaign.
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Delete', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await screenshot(page, 'edit-02-campaign-delete-confirm');
    await page.getByRole('button', { name: 'Delete campaign' }).click();
    await page.waitForURL(/\/admin\/campaigns$/);
    await page.getByRole('status').filter({ hasText: 'Campaign “Old newsletter” deleted.' }).waitFor();
    // The message shows before the list has loaded: counted once the list is there, not before.
    await page.getByRole('link', { name: 'Spring sale', exact: true }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Old newsletter' }).count(), 0);
    assert.equal(await page.getByRole('link', { name: 'Spring sale', exact: true }).count(), 1, 'the others stay');
    await page.goto(`/admin/campaigns/${campaign.id}`);
    await page.getByText('Campaign not found').first().waitFor();
  });

  test('renames a custom field (values kept, segment updated) and cannot delete it while a segment uses it', async () => {
    const field = await makeField(h.db, admin.accountId, 'City', 'string');
    const contact = await makeContact(h.db, admin.accountId, { fields: [{ key: 'City', value: 'Paris' }] });
    const segment = await makeSegment(h.db, admin.accountId, {
      name: 'Parisians',
      criteria: { fields: [{ name: 'City', value: 'Paris' }] },
    });
    await nav(page, 'Custom fields').click();
    const row = page.getByRole('row', { name: /City/ });
    await row.getByRole('button', { name: 'Rename field City' }).click();
    const input = page.getByLabel('New name of field City');
    assert.equal(await input.evaluate((el) => el === document.activeElement), true, 'the name is focused');
    await input.fill('Town');
    await input.press('Enter');
    await page.getByRole('row', { name: /Town/ }).waitFor();
    assert.deepEqual((await getContactProfile(h.db, admin.accountId, { id: contact.id }))?.fields, { Town: 'Paris' });

    const renamed = page.getByRole('row', { name: /Town/ });
    await renamed.getByRole('button', { name: 'Delete', exact: true }).click();
    await renamed.getByRole('button', { name: 'Delete field Town' }).click();
    await renamed.getByRole('alert').filter({ hasText: "custom field 'Town' is used by segment 'Parisians'" }).waitFor();
    await screenshot(page, 'edit-03-field-in-use');

    await h.db.kysely.deleteFrom('segments').where('id', '=', segment.id).execute();
    await renamed.getByRole('button', { name: 'Delete', exact: true }).click();
    await renamed.getByRole('button', { name: 'Delete field Town' }).click();
    await page.getByRole('heading', { name: 'No custom fields yet' }).waitFor();
    assert.deepEqual((await getContactProfile(h.db, admin.accountId, { id: contact.id }))?.fields, {});
    assert.equal((await h.db.kysely.selectFrom('custom_fields').select('id').where('id', '=', field.id).execute()).length, 0);
  });

  test('renames a KPI (the id stays) and deletes it', async () => {
    await makeKpi(h.db, admin.accountId, 'ltv', 'Lifetime value');
    await nav(page, 'KPIs').click();
    const row = page.getByRole('row', { name: /ltv/ });
    await row.getByRole('button', { name: 'Rename KPI ltv' }).click();
    await page.getByLabel('New name of KPI ltv').fill('Revenue');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('cell', { name: 'Revenue' }).waitFor();
    await row.getByRole('button', { name: 'Delete', exact: true }).click();
    await row.getByRole('button', { name: 'Delete KPI ltv' }).click();
    await page.getByRole('heading', { name: 'No KPIs yet' }).waitFor();
  });
});
