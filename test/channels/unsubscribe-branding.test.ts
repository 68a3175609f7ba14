import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PAGE_TEXTS } from '../../src/modules/unsubscribe/page-settings.js';
import { unsubscribeUrl } from '../../src/modules/unsubscribe/unsubscribe-token.js';
import { assertError, signedIn } from '../admin/helpers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { insertCampaign, insertSendingSend, makeRichContact } from './helpers.js';

/**
 * Issue 13, Authoring: the recipient's unsubscribe page carries the account's name, language
 * and texts (set on the account page of the admin panel), HTML-escaped, and only its own.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp({ PUBLIC_URL: 'https://mail.example.test' });
});
after(() => t.close());

/** An account with an admin signed in and one send whose unsubscribe link is `path`. */
async function accountWithLink() {
  const rich = await makeRichContact(t);
  const campaign = await insertCampaign(t, rich.accountId);
  const { id: sendId } = await insertSendingSend(t.db, campaign, rich.contact, rich.email);
  const { panel } = await signedIn(t, { accountId: rich.accountId });
  const name = (await panel.get('/account')).body.name as string;
  return { ...rich, panel, name, path: new URL(unsubscribeUrl(t.config, sendId)).pathname };
}

const get = (path: string) => t.app.inject({ method: 'GET', url: path });
const oneClick = (path: string) =>
  t.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });

const french = {
  lang: 'fr',
  confirmTitle: 'Se désabonner',
  confirmBody: 'Voulez-vous ne plus recevoir ces messages ?',
  confirmButton: 'Me désabonner',
  doneTitle: 'Vous êtes désabonné',
  doneBody: 'Vous ne recevrez plus ces messages.',
};

describe('unsubscribe page of the account', () => {
  test('by default: English, lang="en", the account name heading the page and in its title', async () => {
    const a = await accountWithLink();
    const res = await get(a.path);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<html lang="en">/);
    assert.ok(res.body.includes(`<p class="brand">${a.name}</p>`), res.body);
    assert.ok(res.body.includes(`<title>${DEFAULT_PAGE_TEXTS.confirmTitle} · ${a.name}</title>`));
    assert.ok(res.body.includes(DEFAULT_PAGE_TEXTS.confirmBody));
    assert.deepEqual((await a.panel.get('/account')).body.unsubscribePage, DEFAULT_PAGE_TEXTS);
  });

  test('set on the account: the confirmation and done pages speak its language with its texts', async () => {
    const a = await accountWithLink();
    const saved = await a.panel.patch('/account', { unsubscribePage: french });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(saved.body.unsubscribePage, { ...DEFAULT_PAGE_TEXTS, ...french });
    const page = await get(a.path);
    assert.match(page.body, /<html lang="fr">/);
    assert.ok(page.body.includes('<h1>Se désabonner</h1>'));
    assert.ok(page.body.includes('<button type="submit">Me désabonner</button>'));
    const done = await oneClick(a.path);
    assert.ok(done.body.includes('<h1>Vous êtes désabonné</h1>'));
    assert.ok(done.body.includes('Vous ne recevrez plus ces messages.'));
  });

  test('the texts and the account name are HTML-escaped', async () => {
    const a = await accountWithLink();
    await t.db.kysely.updateTable('accounts').set({ name: 'Acme <b>&</b>' }).where('id', '=', a.accountId).execute();
    const res = await a.panel.patch('/account', { unsubscribePage: { confirmBody: '<script>alert(1)</script> "quoted"', lang: 'en-GB' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const page = await get(a.path);
    assert.ok(!page.body.includes('<script>'));
    assert.ok(page.body.includes('&lt;script&gt;alert(1)&lt;/script&gt; &quot;quoted&quot;'));
    assert.ok(page.body.includes('<p class="brand">Acme &lt;b&gt;&amp;&lt;/b&gt;</p>'));
    assert.match(page.body, /<html lang="en-GB">/);
  });

  test("another account's texts never show on an account's link", async () => {
    const a = await accountWithLink();
    const b = await accountWithLink();
    await b.panel.patch('/account', { unsubscribePage: { ...french, confirmBody: 'Texte de B seulement' } });
    await a.panel.patch('/account', { unsubscribePage: { confirmBody: 'Only A says this' } });
    const pageA = await get(a.path);
    assert.ok(pageA.body.includes('Only A says this'));
    assert.ok(!pageA.body.includes('Texte de B'));
    assert.ok(!pageA.body.includes(b.name));
    assert.match(pageA.body, /<html lang="en">/);
    const pageB = await get(b.path);
    assert.ok(pageB.body.includes('Texte de B seulement'));
    assert.ok(!pageB.body.includes('Only A'));
  });

  test('null or blank goes back to the default; an invalid link stays English with no account', async () => {
    const a = await accountWithLink();
    await a.panel.patch('/account', { unsubscribePage: french });
    const reset = await a.panel.patch('/account', { unsubscribePage: { lang: null, confirmTitle: '  ' } });
    assert.equal(reset.body.unsubscribePage.lang, 'en');
    assert.equal(reset.body.unsubscribePage.confirmTitle, DEFAULT_PAGE_TEXTS.confirmTitle);
    assert.equal(reset.body.unsubscribePage.confirmButton, french.confirmButton, 'the others are kept');
    const invalid = await get('/unsubscribe/not-a-token');
    assert.equal(invalid.statusCode, 404);
    assert.match(invalid.body, /<html lang="en">/);
    assert.ok(!invalid.body.includes('class="brand"'));
  });

  test('refused: a bad language tag, a line break, too long (400 at the member; nothing changes); members cannot', async () => {
    const a = await accountWithLink();
    const res = await a.panel.patch('/account', {
      unsubscribePage: { lang: 'français', doneBody: 'two\nlines', confirmBody: 'x'.repeat(501), confirmTitle: 'Fine' },
    });
    const body = assertError(res, 400, 'Validation Error');
    assert.deepEqual(
      body.details.map((d: { path: string }) => d.path),
      ['/unsubscribePage/lang', '/unsubscribePage/confirmBody', '/unsubscribePage/doneBody'],
    );
    assert.deepEqual((await a.panel.get('/account')).body.unsubscribePage, DEFAULT_PAGE_TEXTS, 'nothing changed');
    const member = await signedIn(t, { role: 'member', accountId: a.accountId });
    assertError(await member.panel.patch('/account', { unsubscribePage: french }), 403, 'Administrators only');
  });
});
