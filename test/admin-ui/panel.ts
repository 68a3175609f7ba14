import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/connect.js';
import type { Herald } from '../../src/herald.js';
import { createAccount, type Plan } from '../../src/modules/accounts/accounts.service.js';
import type { Role } from '../../src/modules/users/users.service.js';
import { browserForTests } from '../helpers/browser.js';
import { makeUser, uniq } from '../helpers/factories.js';
import { startService } from '../helpers/harness.js';

/**
 * The admin panel's browser tests: the whole service (API, panel, dispatcher, webhooks)
 * listening on a free port, and a real Chromium (test/helpers/browser.ts) driven by playwright-core.
 */

export interface PanelHerald {
  herald: Herald;
  db: Db;
  config: Config;
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  logs: string[];
  close(): Promise<void>;
}

/** The whole service listening on a free port of 127.0.0.1 (test/helpers/harness.ts). */
export async function startPanelHerald(env: Record<string, string> = {}): Promise<PanelHerald> {
  const t = await startService({ env, listen: true, logLevel: 'warn' });
  return { herald: t.herald, db: t.db, config: t.config, baseUrl: t.baseUrl!, logs: t.logs, close: t.close };
}

export interface PanelUser {
  accountId: string;
  accountName: string;
  userId: string;
  email: string;
  password: string;
}

/** A fresh account and one of its users, made with the services (as `herald account/user create`). */
export async function makePanelAccount(db: Db, options: { plan?: Plan; role?: Role } = {}): Promise<PanelUser> {
  const accountName = uniq('Acme ');
  const account = await createAccount(db, { name: accountName, plan: options.plan });
  return addPanelUser(db, account.id, accountName, options.role ?? 'admin');
}

export async function addPanelUser(db: Db, accountId: string, accountName: string, role: Role): Promise<PanelUser> {
  const password = `pw-${uniq()}`;
  const user = await makeUser(db, { accountId, role, password });
  return { accountId, accountName, userId: user.userId, email: user.email, password };
}

/** The browser of the panel tests: `skip` goes to each describe() (one line when there is none). */
export const panelBrowser = await browserForTests();

export function launchBrowser(): Promise<Browser> {
  return panelBrowser.launch();
}

/**
 * A browser context for the panel, allowed to use the clipboard (to read what "Copy" put there).
 * `bypassCSP` lets a test inject a script of its own (axe-core) past the panel's CSP.
 */
export async function newPanelContext(
  browser: Browser,
  baseUrl: string,
  viewport = { width: 1360, height: 900 },
  options: { bypassCSP?: boolean } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport, locale: 'en-GB', timezoneId: 'UTC', ...options });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  context.setDefaultTimeout(10_000);
  return context;
}

/** Signs in through the form, as a person would, and waits for the panel. */
export async function signIn(page: Page, user: Pick<PanelUser, 'email' | 'password'>): Promise<void> {
  await page.goto('/admin/');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // attached, not visible: on a narrow screen the navigation sits behind the Menu button.
  await page.getByRole('navigation', { name: 'Main', includeHidden: true }).waitFor({ state: 'attached' });
}

export const RESULTS_DIR = join(process.cwd(), 'test-results');

/** A full-page screenshot into test-results/ (kept by CI as an artifact). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  // Let fonts, frames and the latest data settle so the picture shows the finished page.
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await page.screenshot({ path: join(RESULTS_DIR, `${name}.png`), fullPage: true });
}

/** The admin API from inside the page: same cookie, optionally the CSRF token. */
export async function apiFromPage(
  page: Page,
  method: string,
  path: string,
  options: { body?: unknown; csrf?: boolean } = {},
): Promise<{ status: number; body: any }> {
  return page.evaluate(
    async ({ method, path, body, csrf }) => {
      const headers: Record<string, string> = {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (csrf) {
        const session = await (await fetch('/admin/api/session', { credentials: 'same-origin' })).json();
        headers['x-csrf-token'] = session.csrfToken;
      }
      const res = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, body: parsed };
    },
    { method, path, body: options.body, csrf: options.csrf ?? false },
  );
}

/** The public API, called from the test process like a customer's back end. */
export async function publicApi(baseUrl: string, key: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-api-key': key },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed };
}

/** The error text shown for the control labelled `label` (its aria-describedby error). */
export async function fieldError(page: Page, label: string): Promise<string> {
  const control = page.getByLabel(label, { exact: true });
  await control.and(page.locator('[aria-invalid="true"]')).waitFor();
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id.endsWith('-error'));
  assert.equal(ids.length, 1, `${label} should point at its error`);
  return (await page.locator(`[id="${ids[0]}"]`).textContent()) ?? '';
}
