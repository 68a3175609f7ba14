import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { clickUrl, openPixelUrl, TRACKING_LINK_LIFETIME_DAYS } from '../../src/modules/tracking/tracking-token.js';
import { unsubscribeUrl } from '../../src/modules/unsubscribe/unsubscribe-token.js';
import { signToken } from '../../src/signing.js';
import { deliverEmail, emailTenant, engagementsOf, flip, type RunningHerald, startRunningHerald, stats } from './helpers.js';

/**
 * Only links Herald wrote count, and only to the address Herald wrote: a forged, altered,
 * foreign or expired token answers 404 and counts nothing; no token leads anywhere else.
 */
let t: RunningHerald;
before(async () => {
  t = await startRunningHerald();
});
after(() => t.close());

const EVIL = 'https://evil.example.net/phish';
const LIFETIME_MS = TRACKING_LINK_LIFETIME_DAYS * 86_400_000;

/** An email with its pixel and first click token, and a check that nothing was counted for it. */
async function received() {
  const tenant = await emailTenant(t);
  const delivery = await deliverEmail(t, tenant);
  const openToken = delivery.links.pixel.split('/t/o/')[1]!;
  const clickToken = delivery.links.clicks[0]!.split('/t/c/')[1]!;
  const nothingCounted = async () => {
    assert.deepEqual(await engagementsOf(t, delivery.sendId), []);
    const s = await stats(t, tenant.accountId, tenant.campaignId);
    assert.deepEqual([s.opens, s.uniqueOpens, s.clicks, s.uniqueClicks], [0, 0, 0, 0]);
  };
  return { ...tenant, ...delivery, openToken, clickToken, nothingCounted };
}

async function assertRefused(path: string, kind: 'pixel' | 'click') {
  const res = await fetch(`${t.base}${path}`, { redirect: 'manual' });
  assert.equal(res.status, 404, `${path} answered ${res.status}`);
  assert.equal(res.headers.get('location'), null, 'no redirect');
  if (kind === 'click') assert.match(res.headers.get('content-type') ?? '', /^text\/html/, 'a reader sees a page');
}

describe('forged and altered tokens', () => {
  test('a pixel token with any part changed is 404 and counts no open', async () => {
    const r = await received();
    const [body, mac] = r.openToken.split('.') as [string, string];
    const other = await received();
    for (const bad of [
      flip(r.openToken, 3),
      flip(r.openToken, body.length - 1),
      flip(r.openToken, r.openToken.length - 1),
      `${body}.`,
      `.${mac}`,
      'garbage',
      `${other.openToken.split('.')[0]}.${mac}`,
    ]) {
      await assertRefused(`/t/o/${bad}`, 'pixel');
    }
    await r.nothingCounted();
    await other.nothingCounted();
  });

  test('a click token with any part changed is 404 and counts no click', async () => {
    const r = await received();
    const [body, mac] = r.clickToken.split('.') as [string, string];
    for (const bad of [
      flip(r.clickToken, 5),
      flip(r.clickToken, body.length - 2),
      flip(r.clickToken, r.clickToken.length - 3),
      `${body}.${mac}x`,
      `${body}`,
    ]) {
      await assertRefused(`/t/c/${bad}`, 'click');
    }
    await r.nothingCounted();
  });

  test('a genuine token of another purpose is refused: open for click, click for open, unsubscribe for either', async () => {
    const r = await received();
    const unsubscribe = unsubscribeUrl(t.config, r.sendId).split('/unsubscribe/')[1]!;
    await assertRefused(`/t/c/${r.openToken}`, 'click');
    await assertRefused(`/t/o/${r.clickToken}`, 'pixel');
    await assertRefused(`/t/o/${unsubscribe}`, 'pixel');
    await assertRefused(`/t/c/${unsubscribe}`, 'click');
    await r.nothingCounted();
  });

  test('a token signed with another secret is refused', async () => {
    const r = await received();
    const foreign = { publicUrl: t.base, secret: 'not-this-servers-secret' };
    await assertRefused(new URL(openPixelUrl(foreign, r.sendId)).pathname, 'pixel');
    await assertRefused(new URL(clickUrl(foreign, r.sendId, 'https://shop.example.com/')).pathname, 'click');
    await r.nothingCounted();
  });
});

describe('expired tokens', () => {
  test(`links older than ${TRACKING_LINK_LIFETIME_DAYS} days are 404 and count nothing; younger ones work`, async () => {
    const r = await received();
    const issued = Date.now() - LIFETIME_MS - 60_000;
    await assertRefused(new URL(openPixelUrl(t.config, r.sendId, issued)).pathname, 'pixel');
    await assertRefused(new URL(clickUrl(t.config, r.sendId, 'https://shop.example.com/', issued)).pathname, 'click');
    await r.nothingCounted();
    // A day before expiry the same links still count.
    const young = Date.now() - LIFETIME_MS + 86_400_000;
    assert.equal((await fetch(openPixelUrl(t.config, r.sendId, young))).status, 200);
    assert.equal((await fetch(clickUrl(t.config, r.sendId, 'https://shop.example.com/', young), { redirect: 'manual' })).status, 302);
  });
});

describe('the redirect target cannot be changed', () => {
  test('another address under the same signature is refused', async () => {
    const r = await received();
    const [body, mac] = r.clickToken.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [string, number, string];
    const swapped = Buffer.from(JSON.stringify([payload[0], payload[1], EVIL]), 'utf8').toString('base64url');
    await assertRefused(`/t/c/${swapped}.${mac}`, 'click');
    await r.nothingCounted();
  });

  test('an address that was not in the template has no valid token: signing one needs the secret', async () => {
    const r = await received();
    const payload = JSON.stringify([r.sendId, Math.floor(Date.now() / 1000) + 3600, EVIL]);
    for (const guess of [
      signToken('guessed-secret', 'click', payload),
      signToken(t.config.secret, 'open', payload),
      signToken(t.config.secret, 'unsubscribe', payload),
    ]) {
      await assertRefused(`/t/c/${guess}`, 'click');
    }
    await r.nothingCounted();
  });

  test('only http(s) addresses are ever redirected to, even under a valid signature', async () => {
    const r = await received();
    // What a server-side bug could sign: the redirect still refuses it.
    const token = signToken(
      t.config.secret,
      'click',
      JSON.stringify([r.sendId, Math.floor(Date.now() / 1000) + 3600, 'javascript:alert(1)']),
    );
    await assertRefused(`/t/c/${token}`, 'click');
    await r.nothingCounted();
  });

  test('a valid token naming a send that does not exist is 404', async () => {
    await assertRefused(new URL(clickUrl(t.config, 'snd_doesnotexist', 'https://shop.example.com/')).pathname, 'click');
    await assertRefused(new URL(openPixelUrl(t.config, 'snd_doesnotexist')).pathname, 'pixel');
  });
});
