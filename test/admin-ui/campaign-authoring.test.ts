import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { createField } from '../../src/modules/definitions/definitions.service.js';
import { SmtpSink } from '../fakes/smtp-sink.js';
import { randomEmail } from '../helpers/factories.js';
import {
  launchBrowser,
  makePanelAccount,
  newPanelContext,
  type PanelHerald,
  type PanelUser,
  panelBrowser,
  signIn,
  startPanelHerald,
} from './panel.js';

/**
 * Issue 13, Authoring, in a real Chromium: preview before the first save, the variable picker
 * inserting at the cursor, Liquid errors on the field that has them, and a test send to an
 * address of one's choice that reaches a real SMTP server.
 */

/** The error text shown for the control labelled `label` (its aria-describedby error). */
async function fieldError(page: Page, label: string): Promise<string> {
  const control = page.getByLabel(label, { exact: true });
  await control.and(page.locator('[aria-invalid="true"]')).waitFor();
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id.endsWith('-error'));
  assert.equal(ids.length, 1, `${label} should point at its error`);
  return (await page.locator(`[id="${ids[0]}"]`).textContent()) ?? '';
}

describe('admin panel: authoring a campaign', { skip: panelBrowser.skip }, () => {
  let h: PanelHerald;
  let sink: SmtpSink;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: PanelUser;
  const email = randomEmail();

  before(async () => {
    sink = await SmtpSink.start();
    h = await startPanelHerald({ SMTP_URL: sink.url });
    admin = await makePanelAccount(h.db, { plan: 'free' });
    await writeContact(h.db, admin.accountId, { email, name: 'Ada Lovelace' });
    await createField(h.db, admin.accountId, { name: 'City', type: 'string' });
    browser = await launchBrowser();
    context = await newPanelContext(browser, h.baseUrl);
    page = await context.newPage();
    await signIn(page, admin);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
    await sink?.close();
  });

  const pickContact = async () => {
    await page.getByLabel('Preview for contact').fill(email);
    await page.getByRole('radio', { name: /Ada Lovelace/ }).check();
  };

  test('a new campaign is previewed before its first save, with sample trigger data', async () => {
    await page.goto('/admin/campaigns/new');
    await page.getByLabel('Subject').fill('Order {{ trigger.order }} for {{ contact.name }}');
    await page.getByLabel('HTML body').fill('<p>Hello {{ contact.name }}</p>');
    await pickContact();
    await page.getByLabel('Sample trigger data (JSON)').fill('{"order": "A-42"}');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.getByText('Order A-42 for Ada Lovelace').waitFor();
    await page.frameLocator('iframe[title="Rendered HTML preview"]').getByText('Hello Ada Lovelace').waitFor();
    assert.match(page.url(), /\/admin\/campaigns\/new$/, 'still unsaved');
    const stored = await h.db.kysely.selectFrom('campaigns').select('id').where('account_id', '=', admin.accountId).execute();
    assert.deepEqual(stored, [], 'previewing saved nothing');
    assert.ok(await page.getByRole('button', { name: 'Send test' }).isDisabled(), 'a test send needs a saved campaign');
  });

  test('the variable picker inserts at the cursor of the field used last, from the keyboard', async () => {
    await page.goto('/admin/campaigns/new');
    const subject = page.getByLabel('Subject');
    await subject.fill('Hello  welcome');
    // The cursor after "Hello ".
    await subject.focus();
    await subject.evaluate((el: HTMLInputElement) => el.setSelectionRange(6, 6));
    await subject.press('ArrowLeft');
    await subject.press('ArrowRight');
    await page.getByText('Inserts into Subject at the cursor.').waitFor();

    const variable = page.getByLabel('Variable', { exact: true });
    const options = await variable.locator('option').allTextContents();
    for (const expected of ['contact.name', 'contact.fields.City', 'unsubscribe_url']) assert.ok(options.includes(expected), expected);
    await variable.focus();
    await variable.selectOption('contact.fields.City');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Insert', 'the Insert button is next in tab order');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent === 'Subject');
    assert.equal(await subject.inputValue(), 'Hello {{ contact.fields.City }} welcome');
    const caret = await subject.evaluate((el: HTMLInputElement) => el.selectionStart);
    assert.equal(caret, 'Hello {{ contact.fields.City }}'.length, 'the cursor is after the variable');

    // Trigger data keys come from the sample; the HTML body takes the next one at its own cursor.
    await page.getByLabel('Sample trigger data (JSON)').fill('{"order": {"id": "A-1"}}');
    const html = page.getByLabel('HTML body');
    await html.fill('<p></p>');
    await html.focus();
    await html.evaluate((el: HTMLTextAreaElement) => el.setSelectionRange(3, 3));
    await html.press('Shift+ArrowRight');
    await html.press('Shift+ArrowLeft');
    await page.getByText('Inserts into HTML body at the cursor.').waitFor();
    await variable.selectOption('trigger.order.id');
    await page.getByRole('button', { name: 'Insert', exact: true }).click();
    await page.waitForFunction(() => (document.querySelector('[data-template="html"]') as HTMLTextAreaElement).value.includes('trigger'));
    assert.equal(await html.inputValue(), '<p>{{ trigger.order.id }}</p>');
  });

  test('a Liquid error shows on its field, in words: in the preview and on save', async () => {
    await page.goto('/admin/campaigns/new');
    await page.getByLabel('Name', { exact: true }).fill('Broken');
    await page.getByLabel('From').fill('Acme <news@acme.test>');
    await page.getByLabel('Subject').fill('Hi {% iff contact.name %}');
    await page.getByLabel('HTML body').fill('<p>fine</p>');
    await pickContact();
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    assert.equal(await fieldError(page, 'Subject'), "Subject, line 1: tag 'iff' is not defined");

    await page.getByLabel('HTML body').fill('<p>\n{{ contact.name | shout }}</p>');
    await page.getByLabel('Subject').fill('Hi');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    assert.equal(await fieldError(page, 'HTML body'), "HTML body, line 2: filter 'shout' is not defined");
    assert.match(page.url(), /\/admin\/campaigns\/new$/, 'not created');
  });

  test('a test send goes to the address typed, marked as a test, through SMTP', async () => {
    await page.goto('/admin/campaigns/new');
    await page.getByLabel('Name', { exact: true }).fill('Tested');
    await page.getByLabel('From').fill('Acme <news@acme.test>');
    await page.getByLabel('Subject').fill('Hello {{ contact.name }} ({{ trigger.order }})');
    await page.getByLabel('HTML body').fill('<p>Hi</p>');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.waitForURL(/\/admin\/campaigns\/cmp_[A-Za-z0-9]+$/);

    const to = `qa-${Date.now()}@tester.example`;
    await pickContact();
    await page.getByLabel('Sample trigger data (JSON)').fill('{"order": "T-7"}');
    await page.getByLabel('Send test to (optional)').fill(to);
    const before = sink.messages.length;
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText(new RegExp(`Test message queued \\(snd_[A-Za-z0-9]+\\) to ${to.replace(/[.]/g, '\\.')}`)).waitFor();
    await sink.waitForRecipients([to]);
    const mail = sink.messages.slice(before).find((m) => m.envelope.to.includes(to));
    assert.ok(mail, 'the sink got the test');
    assert.equal(mail.subject, '[Test] Hello Ada Lovelace (T-7)');

    await page.getByLabel('Send test to (optional)').fill('not an address');
    await page.getByRole('button', { name: 'Send test' }).click();
    assert.match(await fieldError(page, 'Send test to (optional)'), /is not an email address/);
  });

  test("the account page sets the unsubscribe page's language and texts; a link of the account shows them", async () => {
    await page.goto('/admin/account');
    await page.getByLabel('Language tag').fill('fr');
    await page.getByLabel('Text for the link of a test message').fill('Ceci était un message de test.');
    await page.getByRole('button', { name: 'Save unsubscribe page' }).click();
    await page.getByText('Unsubscribe page saved.').waitFor();

    // The link of the test sent to another address above (it opts no one out, and says so).
    const mail = sink.messages.filter((m) => m.subject.startsWith('[Test] ')).at(-1);
    assert.ok(mail, 'a test message came in');
    const link = new URL(/<([^>]+)>/.exec(mail.headers['list-unsubscribe']!)![1]!);
    const html = await (await fetch(h.baseUrl + link.pathname)).text();
    assert.match(html, /<html lang="fr">/);
    assert.ok(html.includes('Ceci était un message de test.'));
    assert.ok(html.includes(admin.accountName));
  });
});
