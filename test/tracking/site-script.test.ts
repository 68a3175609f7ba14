import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { apiClient } from '../helpers/app.js';
import { browserForTests } from '../helpers/browser.js';
import { makeTenant } from '../helpers/factories.js';
import { type RunningHerald, startRunningHerald } from './helpers.js';

/**
 * The site script in a real browser (Chromium, test/helpers/browser.ts): a customer's page on its own origin
 * includes /tracker.js from Herald; the visitor id it keeps must survive page loads, differ
 * between browsers, and reach the customer's back end through the form.
 */
let t: RunningHerald;
let site: Server;
let siteUrl: string;
let browser: Browser;
const chromium = await browserForTests();
/** What the customer's back end received from its form, and what Herald answered it. */
const signups: { tracker: string; leadId: string }[] = [];
let key: string;

/** The customer's page: Herald's script, and a sign-up form with the hidden tracker input (as in the README). */
const page = (heraldBase: string) => `<!doctype html>
<html><head><title>Shop</title><script src="${heraldBase}/tracker.js" async></script></head>
<body>
<form method="post" action="/signup">
  <input name="email" value="visitor@example.com">
  <input type="hidden" name="tracker" data-herald-tracker>
  <button type="submit">Sign up</button>
</form>
</body></html>`;

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(new URLSearchParams(body)));
  });
}

before(async () => {
  t = await startRunningHerald();
  key = (await makeTenant(t.db, t.config)).key;
  site = createServer(async (req, res) => {
    if (req.method === 'POST' && req.url === '/signup') {
      // The customer's back end passes the visitor id on to Herald, with its key (never from the browser).
      const form = await readForm(req);
      const tracker = form.get('tracker') ?? '';
      const lead = await apiClient(t.app, key).post('/api/leads', { email: `${tracker}@example.com`, name: 'Visitor', tracker });
      signups.push({ tracker, leadId: lead.body.id });
      res.writeHead(200, { 'content-type': 'text/plain' }).end(String(lead.status));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(t.base));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  // "localhost" against Herald's "127.0.0.1": another origin, so the cookie is the site's own.
  siteUrl = `http://localhost:${(site.address() as AddressInfo).port}/`;
  if (!chromium.skip) browser = await chromium.launch();
});
after(async () => {
  await browser?.close();
  await new Promise((resolve) => site.close(resolve));
  await t.close();
});

describe('GET /tracker.js', () => {
  test('is a small script (under 2 KB), served as JavaScript, cacheable', async () => {
    const res = await fetch(`${t.base}/tracker.js`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(res.headers.get('cache-control') ?? '', /public/);
    const body = Buffer.from(await res.arrayBuffer());
    assert.ok(body.length < 2048, `${body.length} bytes`);
    const again = await fetch(`${t.base}/tracker.js`, { headers: { 'if-none-match': res.headers.get('etag') ?? '' } });
    assert.equal(again.status, 304);
  });
});

describe('the visitor id in Chromium', { skip: chromium.skip }, () => {
  /** Loads the site's page and reads the id the way the site's own code would. */
  async function visit(context: Awaited<ReturnType<Browser['newContext']>>) {
    const tab = await context.newPage();
    await tab.goto(siteUrl);
    await tab.waitForFunction(() => (window as unknown as { herald?: { tracker?: string } }).herald?.tracker);
    const tracker = await tab.evaluate(() => (window as unknown as { herald: { tracker: string } }).herald.tracker);
    const input = await tab.inputValue('input[name="tracker"]');
    return { tab, tracker, input };
  }

  test('is the same across page loads, kept in a first-party cookie, and filled into the form', async () => {
    const context = await browser.newContext();
    try {
      const first = await visit(context);
      assert.match(first.tracker, /^vis_[0-9a-f]{32}$/);
      assert.equal(first.input, first.tracker);
      await first.tab.close();
      const second = await visit(context);
      await second.tab.reload();
      await second.tab.waitForFunction(() => (window as unknown as { herald?: { tracker?: string } }).herald?.tracker);
      const reloaded = await second.tab.evaluate(() => (window as unknown as { herald: { tracker: string } }).herald.tracker);
      assert.deepEqual([second.tracker, reloaded], [first.tracker, first.tracker]);
      const cookies = await context.cookies(siteUrl);
      assert.deepEqual(
        cookies.filter((c) => c.name === 'herald_vid').map((c) => [c.value, c.domain]),
        [[first.tracker, 'localhost']],
      );
    } finally {
      await context.close();
    }
  });

  test('a new browser (context) gets a different id', async () => {
    const [a, b] = [await browser.newContext(), await browser.newContext()];
    try {
      const [one, two] = [await visit(a), await visit(b)];
      assert.notEqual(one.tracker, two.tracker);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test("the form takes the id to the site's back end, which links it to the contact; events then find them by tracker", async () => {
    const context = await browser.newContext();
    try {
      const { tab, tracker } = await visit(context);
      await Promise.all([tab.waitForURL(/\/signup$/), tab.click('button[type="submit"]')]);
      const signup = signups.find((s) => s.tracker === tracker);
      assert.ok(signup, JSON.stringify(signups));
      const event = await apiClient(t.app, key).post('/api/events', { type: 'page_view', tracker });
      assert.equal(event.status, 200, JSON.stringify(event.body));
      assert.equal(event.body.leadId, signup.leadId);
    } finally {
      await context.close();
    }
  });
});
