import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { DEFAULT_PAGE_TEXTS as UNSUBSCRIBE_TEXT } from '../../src/modules/unsubscribe/page-settings.js';
import { sendRow } from '../helpers/herald.js';
import { deliverEmail, emailTenant, type RunningHerald, startRunningHerald } from './helpers.js';

/**
 * The recipient's way out, from the email Herald sent, over real HTTP: the link in the body
 * shows a confirmation page, the mail client's RFC 8058 one-click POST opts out at once,
 * repeats change nothing, and the next trigger for that contact ends as Optout.
 */
let t: RunningHerald;
before(async () => {
  t = await startRunningHerald();
});
after(() => t.close());

const oneClick = (url: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
    redirect: 'manual',
  });

async function unsubscribeLinkOf(t: RunningHerald) {
  const tenant = await emailTenant(t);
  const delivery = await deliverEmail(t, tenant);
  const header = /^<(.+)>$/.exec(delivery.message.headers['List-Unsubscribe'] ?? '')?.[1];
  // biome-ignore lint/complexity/useOptionalChain: only this form lets assert.ok narrow header to a string
  assert.ok(header !== undefined && header.startsWith(`${t.base}/unsubscribe/`), `List-Unsubscribe header: ${header}`);
  assert.equal(delivery.message.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
  const inBody = delivery.links.hrefs.find((h) => h.startsWith(`${t.base}/unsubscribe/`));
  assert.equal(inBody, header, 'the body link and the header name the same address');
  const optedOut = async () => (await getContactProfile(t.db, tenant.accountId, { id: delivery.leadId }))!.optedOut;
  return { ...tenant, ...delivery, url: header, optedOut };
}

describe('unsubscribe from a delivered email', () => {
  test('GET shows the confirmation page and opts nobody out; its button POSTs back; the contact is then opted out', async () => {
    const r = await unsubscribeLinkOf(t);
    const page = await fetch(r.url);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.ok(html.includes(UNSUBSCRIBE_TEXT.confirmBody), html);
    assert.match(html, /<form method="post">/);
    assert.equal(await r.optedOut(), false, 'a GET (a link scanner, a preview) changes nothing');

    const done = await oneClick(r.url);
    assert.equal(done.status, 200);
    assert.ok((await done.text()).includes(UNSUBSCRIBE_TEXT.doneTitle));
    assert.equal(await r.optedOut(), true);
  });

  test('repeated POSTs and a later GET answer 200 and change nothing more', async () => {
    const r = await unsubscribeLinkOf(t);
    assert.equal((await oneClick(r.url)).status, 200);
    const before = await t.db.kysely
      .selectFrom('contacts')
      .select(['opted_out', 'updated_at'])
      .where('id', '=', r.leadId)
      .executeTakeFirstOrThrow();
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let i = 0; i < 3; i++) assert.equal((await oneClick(r.url)).status, 200);
    const page = await fetch(r.url);
    assert.equal(page.status, 200);
    assert.ok((await page.text()).includes(UNSUBSCRIBE_TEXT.doneTitle), 'an opted-out contact sees the done page, no button');
    const afterwards = await t.db.kysely
      .selectFrom('contacts')
      .select(['opted_out', 'updated_at'])
      .where('id', '=', r.leadId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(afterwards, before, 'not even updated_at moves');
  });

  test('a trigger after unsubscribing ends as Optout and sends nothing', async () => {
    const r = await unsubscribeLinkOf(t);
    assert.equal((await oneClick(r.url)).status, 200);
    const again = await r.api.post('/api/campaigns/trigger', { campaignId: r.campaignId, lead: r.email });
    assert.deepEqual([again.status, again.body.status], [200, 'optout']);
    assert.equal((await sendRow(t.db, again.body.sendId)).status, 'optout');
  });

  test('an altered unsubscribe link answers 404 and opts nobody out', async () => {
    const r = await unsubscribeLinkOf(t);
    const altered = r.url.slice(0, -2) + (r.url.endsWith('AA') ? 'BB' : 'AA');
    assert.equal((await oneClick(altered)).status, 404);
    assert.equal((await fetch(altered)).status, 404);
    assert.equal(await r.optedOut(), false);
  });
});
