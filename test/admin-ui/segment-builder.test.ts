import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { recordEvent } from '../../src/modules/events/events.service.js';
import { makeField, makeKpi, randomEmail } from '../helpers/factories.js';
import {
  launchBrowser,
  makePanelAccount,
  newPanelContext,
  type PanelHerald,
  panelBrowser,
  screenshot,
  signIn,
  startPanelHerald,
} from './panel.js';

/**
 * The segment builder (docs/admin-api.md, Segments): two groups, any of which may hold, one
 * with an event the contact did NOT do, the other with a Number field compared by value; the
 * live count, the saved segment's count, and the count in the segment list.
 */
describe('segment builder', { skip: panelBrowser.skip }, () => {
  let h: PanelHerald;
  let browser: Browser;
  let page: Page;
  const DAY = 24 * 60 * 60 * 1000;

  before(async () => {
    h = await startPanelHerald();
    const admin = await makePanelAccount(h.db);
    const { accountId } = admin;
    await makeField(h.db, accountId, 'Score', 'number');
    await makeKpi(h.db, accountId, 'purchases');
    const add = (name: string, lead: Parameters<typeof writeContact>[2]) =>
      writeContact(h.db, accountId, { email: randomEmail(), name, ...lead }).then((r) => r.id);
    const lapsed = await add('Ada Lovelace', { tags: ['vip'] });
    const active = await add('Grace Hopper', { tags: ['vip'], fields: [{ key: 'Score', value: 20 }] });
    await add('Linus Torvalds', { fields: [{ key: 'Score', value: 80 }] });
    await add('Alan Turing', { fields: [{ key: 'Score', value: 50 }] });
    await recordEvent(h.db, accountId, { type: 'login', leadId: lapsed }, Date.now() - 60 * DAY);
    await recordEvent(h.db, accountId, { type: 'login', leadId: active }, Date.now() - DAY);
    browser = await launchBrowser();
    page = await (await newPanelContext(browser, h.baseUrl)).newPage();
    await signIn(page, admin);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  test('builds "VIPs who did not log in for 30 days, or Score above 50" and sees 2 contacts, saved and listed', async () => {
    await page.goto('/admin/segments/new');
    await page.getByLabel('Segment name').fill('Win-back');
    await page.getByLabel('Did or did not').selectOption('not');
    await page.getByLabel('Event type').fill('login');
    await page.getByLabel('Within the last (days)').fill('30');
    await page.getByLabel('Tags').fill('vip');
    const count = page.getByTestId('segment-count');
    await count.filter({ hasText: /^1$/ }).waitFor();

    await page.getByRole('button', { name: 'Add group (or)' }).click();
    const second = page.getByRole('group', { name: 'Group 2' });
    await second.getByRole('button', { name: 'Add field condition' }).click();
    await second.getByLabel('Field 1', { exact: true }).selectOption('Score');
    await second.getByLabel('Comparison 1', { exact: true }).selectOption('gt');
    await second.getByLabel('Value 1', { exact: true }).fill('abc');
    // A value the field's rules refuse is named next to its input.
    await second.getByText(/must be a number/).waitFor();
    await second.getByLabel('Value 1', { exact: true }).fill('50');
    await count.filter({ hasText: /^2$/ }).waitFor();
    const matching = page.getByRole('region', { name: 'Matching contacts' });
    await matching.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    await matching.getByRole('link', { name: 'Linus Torvalds' }).waitFor();
    assert.equal(await matching.getByRole('link', { name: 'Grace Hopper' }).count(), 0);

    await page.getByRole('button', { name: 'Save segment' }).click();
    await page.waitForURL(/\/admin\/segments\/[^/]+$/);
    await page.getByRole('heading', { name: 'Win-back', level: 1 }).waitFor();
    await count.filter({ hasText: /^2$/ }).waitFor();
    // The saved groups come back into the form as they were built.
    assert.equal(await page.getByRole('group', { name: 'Group 1' }).getByLabel('Did or did not').inputValue(), 'not');
    assert.equal(await page.getByRole('group', { name: 'Group 2' }).getByLabel('Comparison 1', { exact: true }).inputValue(), 'gt');
    await screenshot(page, 'segment-or-groups');

    await page.getByRole('link', { name: '← Segments' }).click();
    const row = page.getByRole('row', { name: /Win-back/ });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /no event “login” within 30 days.* or .*Score > “50”/);
    assert.equal((await row.getByRole('cell').nth(2).textContent())?.trim(), '2');
  });
});
