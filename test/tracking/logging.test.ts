import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { redactUrl } from '../../src/http/logger.js';
import { updateAccount } from '../../src/modules/accounts/accounts.service.js';
import { makeTenant, uniq } from '../helpers/factories.js';
import { deliverEmail, emailTenant, type RunningHerald, startRunningHerald } from './helpers.js';

/** Tracking, unsubscribe and handshake tokens are bearer secrets: they never reach a log line. */
let t: RunningHerald;
before(async () => {
  t = await startRunningHerald();
});
after(() => t.close());

const tokenOf = (url: string) => url.split('/').pop()!;

describe('bearer links stay out of the logs', () => {
  test('pixel, click and unsubscribe requests are logged with the token redacted', async () => {
    const tenant = await emailTenant(t);
    const { links } = await deliverEmail(t, tenant);
    const unsubscribe = links.hrefs.find((h) => h.includes('/unsubscribe/'))!;
    t.logs.length = 0;
    await fetch(links.pixel);
    await fetch(links.clicks[0]!, { redirect: 'manual' });
    await fetch(unsubscribe);
    const urls = t.logs.map((l) => JSON.parse(l) as { req?: { url: string } }).flatMap((l) => (l.req ? [l.req.url] : []));
    assert.deepEqual(urls, ['/t/o/[REDACTED]', '/t/c/[REDACTED]', '/unsubscribe/[REDACTED]']);
    for (const token of [tokenOf(links.pixel), tokenOf(links.clicks[0]!), tokenOf(unsubscribe)]) {
      assert.deepEqual(
        t.logs.filter((l) => l.includes(token.split('.')[1]!)),
        [],
        'no line holds the signature',
      );
    }
  });

  test('the WhatsApp verify token of the handshake is redacted', async () => {
    const { accountId } = await makeTenant(t.db, t.config, { plan: 'pro' });
    const verifyToken = uniq('verify-');
    await updateAccount(t.db, t.config, accountId, { whatsappVerifyToken: verifyToken });
    t.logs.length = 0;
    const res = await fetch(`${t.base}/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=7`);
    assert.equal(res.status, 200);
    assert.ok(t.logs.length > 0);
    assert.deepEqual(
      t.logs.filter((l) => l.includes(verifyToken)),
      [],
    );
  });

  test('escaped spellings that reach the same routes are redacted too', () => {
    assert.equal(redactUrl('/%74/o/abc.def'), '/t/o/[REDACTED]');
    assert.equal(redactUrl('/%75nsubscribe/abc.def?x=1'), '/unsubscribe/[REDACTED]?x=1');
    assert.equal(
      redactUrl('/whatsapp/webhook?hub.mode=subscribe&hub%2Everify_token=s3cret'),
      '/whatsapp/webhook?hub.mode=subscribe&hub%2Everify_token=[REDACTED]',
    );
    assert.equal(redactUrl('/tracker.js'), '/tracker.js');
  });
});
