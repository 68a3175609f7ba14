import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import Papa from 'papaparse';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { countContacts } from '../../src/modules/contacts/contacts.admin.service.js';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { makeField, makeKpi, makeSegment, uniq } from '../helpers/factories.js';
import { eventually } from '../helpers/herald.js';
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

/** Contacts at scale in the panel: search with its count, CSV import (mapping, check, progress, row errors), CSV export. */

const ROWS = 3000;
/** Checking or importing them: seconds on SQLite; PostgreSQL on a busy 2-core machine needs far more. */
const RUN_TIMEOUT = 180_000;

/** A file of ROWS rows: the headers a person would write, and three rows POST /api/leads refuses or warns about. */
function bigCsv(marker: string): string {
  const lines = ['E-mail,Full Name,Phone,Tags,City,Orders,Notes'];
  for (let i = 0; i < ROWS; i++) {
    if (i === 3) lines.push(',No Address,,,,,');
    else if (i === 10) lines.push(`nobody${i}.${marker}@example.com,,,,,,missing name`);
    else if (i === 20) lines.push(`warn${i}.${marker}@example.com,Warned Person,,,,lots,`);
    else lines.push(`p${i}.${marker}@example.com,"Person ${i}, ${marker}",,"vip, csv",Paris,${i % 3},`);
  }
  return `${lines.join('\n')}\n`;
}

describe('admin panel: contacts at scale (search, count, CSV import and export)', { skip: panelBrowser.skip }, () => {
  let h: PanelHerald;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let user: PanelUser;

  before(async () => {
    h = await startPanelHerald();
    user = await makePanelAccount(h.db);
    await makeField(h.db, user.accountId, 'City', 'location');
    await makeKpi(h.db, user.accountId, 'orders', 'Orders');
    await writeContact(h.db, user.accountId, { email: 'ada@lovelace.example', name: 'Ada Lovelace', tags: ['vip'] });
    await writeContact(h.db, user.accountId, { email: 'grace@navy.example', name: 'Grace Hopper' });
    browser = await launchBrowser();
    context = await newPanelContext(browser, h.baseUrl);
    page = await context.newPage();
    await signIn(page, user);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  const status = () => page.getByRole('status').filter({ hasText: 'Showing' });

  test('search finds part of a name or an email; the page says how many match in all', async () => {
    await page.goto('/admin/contacts');
    await status().getByText('Showing 2 of 2 contacts').waitFor();
    for (const [q, name] of [
      ['OVEL', 'Ada Lovelace'],
      ['navy.ex', 'Grace Hopper'],
    ]) {
      await page.getByLabel('Email, phone or name').fill(q!);
      await page.getByRole('button', { name: 'Search' }).click();
      await status().getByText('Showing 1 of 1 contact').waitFor();
      await page.getByRole('link', { name }).waitFor();
      await eventually(async () => (await page.getByRole('row').count()) === 2, 5000, `only ${name} for ${q}`);
    }
  });

  test('imports a file of several thousand rows: mapping guessed from the headers, a check that keeps nothing, row errors, progress', async () => {
    const marker = uniq('imp');
    await page.goto('/admin/contacts');
    await page.getByRole('link', { name: 'Import CSV' }).click();
    await page.getByRole('heading', { name: 'Import contacts' }).waitFor();
    // The file input is enabled once the field and KPI definitions are in (the mapping is guessed
    // against them); setInputFiles would not wait for that by itself.
    await page.locator('#import-csv:enabled').waitFor();
    await page.getByLabel('CSV file').setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(bigCsv(marker)) });

    await page.getByText(`${ROWS} rows in people.csv`).waitFor();
    const mapped = async (header: string) => page.getByLabel(`Column ${header}`).inputValue();
    assert.deepEqual(await Promise.all(['E-mail', 'Full Name', 'Phone', 'Tags', 'City', 'Orders', 'Notes'].map(mapped)), [
      'email',
      'name',
      'phone',
      'tags',
      'field:City',
      'kpi:orders',
      'ignore',
    ]);
    await page.getByRole('cell', { name: `Person 0, ${marker}` }).waitFor();
    await screenshot(page, 'contacts-import-preview');

    await page.getByRole('button', { name: 'Check rows' }).click();
    await page.getByText(`Check finished: ${ROWS} of ${ROWS} rows`).waitFor({ timeout: RUN_TIMEOUT });
    const report = page.getByRole('region', { name: /Check/ });
    await report.getByText(`Would create ${ROWS - 2}, would update 0, 2 rows refused, 1 warnings.`).waitFor();
    const problems = async () => (await report.getByRole('row').allTextContents()).slice(1).map((text) => text.replace(/\s+/g, ' ').trim());
    assert.deepEqual(await problems(), [
      '5Error: email: an email or a phone is required to create a contact',
      '12Error: name: is required to create a contact (at least 2 characters)',
      "22Warning: kpis: value of KPI 'orders' must be a number",
    ]);
    assert.equal((await countContacts(h.db, user.accountId, {})).count, 2, 'the check kept nothing');

    await page.getByRole('button', { name: `Import ${ROWS} rows` }).click();
    await page.getByText(`Import finished: ${ROWS} of ${ROWS} rows`).waitFor({ timeout: RUN_TIMEOUT });
    await page.getByText(`Created ${ROWS - 2}, updated 0, 2 rows refused, 1 warnings.`).waitFor();
    assert.equal(await page.locator('#import-progress').getAttribute('value'), String(ROWS));
    await screenshot(page, 'contacts-import-done');
    assert.equal((await countContacts(h.db, user.accountId, {})).count, 2 + ROWS - 2);

    // Every created row holds the marker in its name or email (rows 5 and 12 were refused).
    await page.goto(`/admin/contacts?q=${marker}`);
    await status()
      .getByText(`Showing 50 of ${(ROWS - 2).toLocaleString('en')} contacts`)
      .waitFor();
  });

  /** Clicks the link and reads the CSV file the browser saved. */
  async function download(name: string): Promise<{ file: string; rows: string[][] }> {
    const [saved] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name }).click()]);
    const text = readFileSync((await saved.path())!, 'utf8');
    return { file: saved.suggestedFilename(), rows: Papa.parse<string[]>(text.replace(/^\uFEFF/, ''), { skipEmptyLines: true }).data };
  }

  test('exports the list as searched, and a segment, as CSV downloads', async () => {
    await page.goto('/admin/contacts?q=lovelace');
    await status().getByText('Showing 1 of 1 contact').waitFor();
    const list = await download('Export CSV');
    assert.match(list.file, /^contacts-\d{4}-\d\d-\d\d\.csv$/);
    assert.deepEqual(
      list.rows.map((r) => r.slice(1, 5)),
      [
        ['name', 'email', 'phone', 'tags'],
        ['Ada Lovelace', 'ada@lovelace.example', '', 'vip'],
      ],
    );

    const segment = await makeSegment(h.db, user.accountId, { name: 'VIP people', criteria: { tags: ['vip'] } });
    await page.goto(`/admin/segments/${segment.id}`);
    const all = await download('Export CSV');
    assert.match(all.file, /^segment-VIP-people-\d{4}-\d\d-\d\d\.csv$/);
    assert.equal(all.rows.length - 1, (await countContacts(h.db, user.accountId, { tag: 'vip' })).count, 'every contact tagged vip');
  });
});
