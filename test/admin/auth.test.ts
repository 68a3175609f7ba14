import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { randomEmail } from '../helpers/factories.js';
import { assertError, login, makeUser, PASSWORD, panel, signIn } from './helpers.js';

/** docs/admin-api.md, Sessions, CSRF, roles: sign-in, sign-out, the session, its expiry, CSRF. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

describe('sign-in', () => {
  test('right email and password: 200 with user, account and csrfToken, and the session cookie', async () => {
    const user = await makeUser(t, { role: 'member' });
    const res = await login(t.app, user.email.toUpperCase(), PASSWORD);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.user, { id: user.userId, email: user.email, role: 'member' });
    assert.equal(res.body.account.id, user.accountId);
    assert.equal(res.body.account.plan, 'free');
    assert.equal(typeof res.body.account.name, 'string');
    assert.match(res.body.csrfToken, /^[A-Za-z0-9_-]{40,}$/);
    const cookie = res.cookies.find((c) => c.name === 'herald_session');
    assert.ok(cookie, JSON.stringify(res.headers['set-cookie']));
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/admin');
    assert.equal(cookie.secure, undefined, 'not Secure when PUBLIC_URL is http');
    assert.equal(cookie.maxAge, 7 * 24 * 3600);
  });

  test('the session cookie is Secure when PUBLIC_URL is https', async () => {
    const https = await startTestApp({ PUBLIC_URL: 'https://herald.example.com' });
    try {
      const user = await makeUser(https);
      const res = await login(https.app, user.email, PASSWORD);
      assert.equal(res.status, 200);
      assert.equal(res.cookies.find((c) => c.name === 'herald_session')?.secure, true);
    } finally {
      await https.close();
    }
  });

  test('wrong password and unknown email get the same 401 answer, and no cookie', async () => {
    const user = await makeUser(t);
    const wrong = await login(t.app, user.email, 'not the password');
    const unknown = await login(t.app, randomEmail(), PASSWORD);
    assertError(wrong, 401, 'Invalid email or password');
    assert.deepEqual(wrong.body, unknown.body);
    assert.equal(wrong.cookies.length + unknown.cookies.length, 0);
  });

  test('login body members are required and typed (400 Validation Error)', async () => {
    assertError(
      await t.app.inject({ method: 'POST', url: '/admin/api/login', payload: { email: 'a@example.com' } }).then(toReply),
      400,
      'Validation Error',
      '/password',
    );
  });

  test('the session token is stored hashed: the sessions table never holds the cookie value', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    const token = p.cookie.split('=')[1]!;
    const rows = await t.db.kysely.selectFrom('sessions').selectAll().where('user_id', '=', user.userId).execute();
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]!.id, token);
    assert.equal(rows[0]!.id.length, 64, 'a SHA-256 in hex');
  });

  test('neither the password nor the session token reaches the log', async () => {
    const user = await makeUser(t);
    t.logs.length = 0;
    const p = await signIn(t, user.email);
    await p.get('/session');
    await login(t.app, user.email, 'a wrong password 123');
    const token = p.cookie.split('=')[1]!;
    const all = t.logs.join('');
    assert.ok(all.length > 0);
    for (const secret of [PASSWORD, 'a wrong password 123', token, p.csrf])
      assert.ok(!all.includes(secret), `log holds a secret: ${secret}`);
  });
});

describe('session', () => {
  test('GET /session answers the login body while signed in', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    const res = await p.get('/session');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, p.session);
  });

  test('without a cookie, or with an unknown one: 401 Not signed in', async () => {
    assertError(await t.app.inject({ method: 'GET', url: '/admin/api/session' }).then(toReply), 401, 'Not signed in');
    assertError(await panel(t.app, 'made-up-token', 'x').get('/contacts'), 401, 'Not signed in');
  });

  test('logout: 204, the cookie is cleared, and the session no longer works', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    const res = await p.post('/logout');
    assert.equal(res.status, 204);
    const cleared = res.cookies.find((c) => c.name === 'herald_session');
    assert.ok(cleared && cleared.value === '', 'the cookie is cleared');
    assertError(await p.get('/session'), 401, 'Not signed in');
    const rows = await t.db.kysely.selectFrom('sessions').select('id').where('user_id', '=', user.userId).execute();
    assert.equal(rows.length, 0, 'the session row is deleted');
  });

  test('an expired session is refused (401) and removed', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    await t.db.kysely
      .updateTable('sessions')
      .set({ expires_at: Date.now() - 1 })
      .where('user_id', '=', user.userId)
      .execute();
    assertError(await p.get('/session'), 401, 'Not signed in');
    const rows = await t.db.kysely.selectFrom('sessions').select('id').where('user_id', '=', user.userId).execute();
    assert.equal(rows.length, 0);
  });

  test('sliding: a request pushes the expiry 7 days ahead again and re-sends the cookie', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    const soon = Date.now() + 60 * 60 * 1000;
    await t.db.kysely.updateTable('sessions').set({ expires_at: soon }).where('user_id', '=', user.userId).execute();
    const res = await p.get('/session');
    assert.equal(res.status, 200);
    const row = await t.db.kysely.selectFrom('sessions').select('expires_at').where('user_id', '=', user.userId).executeTakeFirstOrThrow();
    assert.ok(Number(row.expires_at) > Date.now() + 7 * 24 * 3600 * 1000 - 60_000, 'expiry moved to 7 days from now');
    assert.ok(
      res.cookies.some((c) => c.name === 'herald_session' && c.maxAge === 7 * 24 * 3600),
      'cookie sent again',
    );
  });

  test('a deleted user is signed out at once', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    await t.db.kysely.deleteFrom('sessions').where('user_id', '=', user.userId).execute();
    await t.db.kysely.deleteFrom('users').where('id', '=', user.userId).execute();
    assertError(await p.get('/session'), 401, 'Not signed in');
  });
});

describe('CSRF', () => {
  test('a form-style POST with the session cookie but no x-csrf-token is 403, and changes nothing', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    const res = await p.raw({
      method: 'POST',
      url: '/admin/api/kpis',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'id=forged&name=Forged',
    });
    assertError(res, 403, 'Invalid CSRF token');
    const kpis = await p.get('/kpis');
    assert.deepEqual(kpis.body.items, []);
  });

  test('a wrong x-csrf-token is 403 on POST, PATCH, PUT and DELETE', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    const other = await signIn(t, (await makeUser(t)).email);
    const wrong = { 'x-csrf-token': other.csrf, 'content-type': 'application/json' };
    for (const [method, url] of [
      ['POST', '/kpis'],
      ['PATCH', '/account'],
      ['PUT', '/segments/seg_x'],
      ['DELETE', '/keys/key_x'],
    ] as const) {
      const res = await p.raw({ method, url: `/admin/api${url}`, headers: wrong, payload: {} });
      assertError(res, 403, 'Invalid CSRF token');
    }
  });

  test('logout needs the CSRF token too (a forged logout is refused)', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    assertError(await p.post('/logout', undefined, {}), 403, 'Invalid CSRF token');
    assert.equal((await p.get('/session')).status, 200);
  });

  test('GET needs no token; the right token lets a write through', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    assert.equal((await p.get('/kpis')).status, 200);
    const res = await p.post('/kpis', { id: 'ltv', name: 'Lifetime value' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });
});

describe('the admin API stays out of the public API', () => {
  test('admin routes are not in /openapi.json', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    assert.deepEqual(
      Object.keys(doc.paths).filter((p) => p.startsWith('/admin')),
      [],
    );
  });

  test('an unknown admin API path is a JSON 404', async () => {
    const user = await makeUser(t);
    const p = await signIn(t, user.email);
    assertError(await p.get('/nothing-here'), 404, 'Not Found');
  });
});

function toReply(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown; cookies: unknown[] }) {
  return { status: res.statusCode, headers: res.headers, body: res.json() as any, cookies: res.cookies as any };
}
