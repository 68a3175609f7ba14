import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Channels, createChannels, listOutbox } from '../../src/channels/transports.js';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { DEFAULT_PAGE_TEXTS as UNSUBSCRIBE_TEXT } from '../../src/modules/unsubscribe/page-settings.js';
import { unsubscribeUrl } from '../../src/modules/unsubscribe/unsubscribe-token.js';
import { signToken, verifyToken } from '../../src/signing.js';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { captureLogger } from '../helpers/harness.js';
import { insertCampaign, insertSendingSend, makeDelivery, makeRichContact } from './helpers.js';

/** The recipient's side of the unsubscribe link: pages for people, one-click for mailbox providers. */
let t: TestApp;
let channels: Channels;
before(async () => {
  t = await startTestApp({ PUBLIC_URL: 'https://mail.example.test' });
  channels = createChannels(t.config, t.db, captureLogger({ raw: true }).logger);
});
after(async () => {
  await channels.close();
  await t.close();
});

/** A contact who received one send of an email campaign; `path` is its unsubscribe link's path. */
async function received() {
  const rich = await makeRichContact(t);
  const campaign = await insertCampaign(t, rich.accountId);
  const { id: sendId } = await insertSendingSend(t.db, campaign, rich.contact, rich.email);
  const url = unsubscribeUrl(t.config, sendId);
  assert.ok(url.startsWith('https://mail.example.test/unsubscribe/'));
  return {
    ...rich,
    sendId,
    path: new URL(url).pathname,
    state: () =>
      t.db.kysely.selectFrom('contacts').select(['opted_out', 'updated_at']).where('id', '=', rich.contact.id).executeTakeFirstOrThrow(),
  };
}

const oneClick = (path: string) =>
  t.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });

describe('unsubscribe link', () => {
  test('GET shows a confirmation page with a button that posts back, and opts nobody out', async () => {
    const r = await received();
    const res = await t.app.inject({ method: 'GET', url: r.path });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /<form method="post">/);
    assert.ok(res.body.includes(`<button type="submit">${UNSUBSCRIBE_TEXT.confirmButton}</button>`));
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal((await r.state()).opted_out, 0);
  });

  test('POST with the RFC 8058 one-click body opts the contact out', async () => {
    const r = await received();
    const res = await oneClick(r.path);
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.includes(UNSUBSCRIBE_TEXT.doneTitle));
    assert.equal((await getContactProfile(t.db, r.accountId, { id: r.contact.id }))!.optedOut, true);
  });

  test('the multipart/form-data form of the one-click POST works too', async () => {
    const r = await received();
    const boundary = '---FormBoundaryjWmhtjORrn';
    const payload = `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`;
    const res = await t.app.inject({
      method: 'POST',
      url: r.path,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    });
    assert.equal(res.statusCode, 200);
    assert.equal((await r.state()).opted_out, 1);
  });

  test('repeating the POST or the GET changes nothing more', async () => {
    const r = await received();
    await oneClick(r.path);
    const first = await r.state();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await oneClick(r.path);
    const page = await t.app.inject({ method: 'GET', url: r.path });
    assert.equal(again.statusCode, 200);
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes(UNSUBSCRIBE_TEXT.doneTitle), 'an opted-out contact sees the done page, not the button');
    assert.deepEqual(await r.state(), first, 'not even updated_at moves');
  });

  test('an altered token answers 404 and changes nothing', async () => {
    const r = await received();
    const other = await received();
    const token = r.path.split('/').pop()!;
    const [body, mac] = token.split('.') as [string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const forged = [
      `${flip(body, 2)}.${mac}`,
      `${body}.${flip(mac, 5)}`,
      `${body}.${flip(mac, mac.length - 1)}`,
      // Another send's id under this send's signature.
      `${other.path.split('/').pop()!.split('.')[0]}.${mac}`,
      // A genuine signature for another purpose.
      signToken(t.config.secret, 'click', r.sendId),
      `${body}.`,
      'garbage',
    ];
    for (const bad of forged) {
      const get = await t.app.inject({ method: 'GET', url: `/unsubscribe/${bad}` });
      const post = await oneClick(`/unsubscribe/${bad}`);
      assert.deepEqual([get.statusCode, post.statusCode], [404, 404], bad);
      assert.match(String(post.headers['content-type']), /^text\/html/);
    }
    assert.equal((await r.state()).opted_out, 0);
    assert.equal((await other.state()).opted_out, 0);
  });

  test("the link in a sent email's List-Unsubscribe header unsubscribes its recipient", async () => {
    const rich = await makeRichContact(t);
    const request = await makeDelivery(t.db, await insertCampaign(t, rich.accountId), rich.contact);
    await channels.email.deliver(request);
    const [item] = (await listOutbox(t.db, rich.accountId)).items;
    const link = /^<(.+)>$/.exec(item!.headers['List-Unsubscribe']!)![1]!;
    assert.ok(item!.text!.includes(link) && item!.html!.includes(link));
    assert.equal((await oneClick(new URL(link).pathname)).statusCode, 200);
    assert.equal((await getContactProfile(t.db, rich.accountId, { id: rich.contact.id }))!.optedOut, true);
  });

  test('stays out of the public OpenAPI document, and form bodies stay refused on the API', async () => {
    const doc = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(doc.statusCode, 200);
    assert.ok(!doc.body.includes('/unsubscribe'));
    const rich = await makeRichContact(t);
    const res = await apiClient(t.app, rich.key).call({
      method: 'POST',
      url: '/api/leads',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=a%40b.test&name=Form',
    });
    assert.equal(res.status, 415);
  });
});

describe('signed tokens', () => {
  test('verify what was signed, for the same purpose only', () => {
    const token = signToken('s3cret', 'unsubscribe', 'snd_01abc');
    assert.equal(verifyToken('s3cret', 'unsubscribe', token), 'snd_01abc');
    assert.equal(verifyToken('s3cret', 'open', token), undefined);
    assert.equal(verifyToken('other', 'unsubscribe', token), undefined);
    assert.ok(!token.includes('s3cret'));
  });

  test('every single-character change is refused', () => {
    const token = signToken('s3cret', 'click', 'https://acme.test/?a=1&b=é');
    assert.equal(verifyToken('s3cret', 'click', token), 'https://acme.test/?a=1&b=é');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    for (let i = 0; i < token.length; i++) {
      for (const c of alphabet) {
        if (c === token[i]) continue;
        const altered = token.slice(0, i) + c + token.slice(i + 1);
        assert.equal(verifyToken('s3cret', 'click', altered), undefined, altered);
      }
    }
  });
});
