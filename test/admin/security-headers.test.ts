import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { unsubscribeUrl } from '../../src/modules/unsubscribe/unsubscribe-token.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedIn } from './helpers.js';

/**
 * The browser security headers (decisions.md, Admin panel): everything under /admin carries the
 * panel's strict policy; the message frame and the recipient pages carry their own. The panel
 * itself is walked in Chromium under this policy by test/admin-ui/admin-panel-csp.test.ts.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

/** The CSP as directive -> sources. */
function directives(csp: unknown): Map<string, string[]> {
  assert.equal(typeof csp, 'string', 'a Content-Security-Policy header');
  return new Map(
    (csp as string)
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...sources]) => [name!, sources]),
  );
}

function assertPanelHeaders(headers: Record<string, unknown>, what: string) {
  const csp = directives(headers['content-security-policy']);
  assert.deepEqual(csp.get('default-src'), ["'none'"], what);
  assert.deepEqual(csp.get('script-src'), ["'self'"], `${what}: scripts only from the panel's files, nothing inline`);
  assert.deepEqual(csp.get('style-src'), ["'self'"], `${what}: no inline styles`);
  assert.deepEqual(csp.get('frame-ancestors'), ["'none'"], what);
  assert.deepEqual(csp.get('base-uri'), ["'none'"], what);
  assert.equal(headers['x-frame-options'], 'DENY', what);
  assert.equal(headers['x-content-type-options'], 'nosniff', what);
  assert.equal(headers['referrer-policy'], 'no-referrer', what);
}

describe('the admin panel', () => {
  test('its pages, assets, API answers and errors all carry the strict policy and the other headers', async () => {
    const index = await t.app.inject({ method: 'GET', url: '/admin/' });
    assert.equal(index.statusCode, 200);
    const asset = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(index.body)?.[1];
    assert.ok(asset, 'the built panel names its script');
    // Vite's build has no inline script or style the policy would refuse.
    assert.doesNotMatch(index.body, /<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=/i);

    const { panel } = await signedIn(t);
    const answers: [string, { statusCode: number; headers: Record<string, unknown> }][] = [
      ['/admin/', index],
      ['/admin/campaigns/cmp_deep_link', await t.app.inject({ method: 'GET', url: '/admin/campaigns/cmp_deep_link' })],
      [asset, await t.app.inject({ method: 'GET', url: asset })],
      ['/admin/assets/missing.js', await t.app.inject({ method: 'GET', url: '/admin/assets/missing.js' })],
      ['/admin/api/session without a session', await t.app.inject({ method: 'GET', url: '/admin/api/session' })],
      ['/admin/api/campaigns', { statusCode: (await panel.get('/campaigns')).status, headers: (await panel.get('/campaigns')).headers }],
      ['/admin/api/nothing', await t.app.inject({ method: 'GET', url: '/admin/api/nothing?x=1' })],
      ['POST /admin/api/login with a bad body', await t.app.inject({ method: 'POST', url: '/admin/api/login', payload: { email: 1 } })],
    ];
    assert.deepEqual(
      answers.map(([, res]) => res.statusCode),
      [200, 200, 200, 404, 401, 200, 404, 400],
    );
    for (const [what, res] of answers) assertPanelHeaders(res.headers, what);
  });

  test('the message frame: an empty document with a policy of its own, framed by the panel only, no script at all', async () => {
    const { panel } = await signedIn(t);
    const res = await panel.get('/message-frame');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /<body><\/body>/, 'empty: the panel writes the message in');
    const csp = directives(res.headers['content-security-policy']);
    assert.deepEqual(csp.get('default-src'), ["'none'"]);
    assert.equal(csp.get('script-src'), undefined, 'no script-src: default-src none forbids every script');
    assert.deepEqual(csp.get('frame-ancestors'), ["'self'"]);
    assert.deepEqual(csp.get('sandbox'), ['allow-same-origin']);
    assert.deepEqual(csp.get('form-action'), ["'none'"]);
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    // Without a session it is the panel's 401, under the panel's policy.
    const anonymous = await t.app.inject({ method: 'GET', url: '/admin/api/message-frame' });
    assert.equal(anonymous.statusCode, 401);
    assertPanelHeaders(anonymous.headers, 'message frame without a session');
  });

  test("the public API is not given the panel's headers", async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/leads', payload: {} });
    assert.equal(res.headers['content-security-policy'], undefined);
  });
});

test('the unsubscribe page keeps its policy, now with the same companion headers', async () => {
  const res = await t.app.inject({ method: 'GET', url: new URL(unsubscribeUrl(t.config, 'snd_unknown')).pathname });
  assert.equal(res.statusCode, 404);
  const csp = directives(res.headers['content-security-policy']);
  assert.deepEqual(csp.get('default-src'), ["'none'"]);
  assert.deepEqual(csp.get('frame-ancestors'), ["'none'"]);
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.equal(res.headers['referrer-policy'], 'no-referrer');
});
