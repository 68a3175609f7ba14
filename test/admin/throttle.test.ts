import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newId } from '../../src/ids.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { randomEmail } from '../helpers/factories.js';
import { assertError, login, makeUser, PASSWORD, randomIp } from './helpers.js';

/** docs/admin-api.md: 5 failed sign-ins for one email or one IP within 15 minutes, then 429 with Retry-After. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const WINDOW_S = 15 * 60;

function assertThrottled(res: Awaited<ReturnType<typeof login>>) {
  assertError(res, 429, 'Too many sign-in attempts');
  const wait = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(wait) && wait > 0 && wait <= WINDOW_S, `Retry-After in seconds: ${String(res.headers['retry-after'])}`);
  assert.equal(res.cookies.length, 0, 'no session');
}

test('5 failures for one email (from different IPs): the 6th attempt is refused, even with the right password', async () => {
  const user = await makeUser(t);
  for (let i = 0; i < 5; i++) assertError(await login(t.app, user.email, `wrong ${i}`, randomIp()), 401, 'Invalid email or password');
  assertThrottled(await login(t.app, user.email, PASSWORD, randomIp()));
});

test('5 failures from one IP (different emails): that IP is refused for any email', async () => {
  const ip = randomIp();
  for (let i = 0; i < 5; i++) assertError(await login(t.app, randomEmail(), 'wrong password', ip), 401, 'Invalid email or password');
  const user = await makeUser(t);
  assertThrottled(await login(t.app, user.email, PASSWORD, ip));
  // Another address is not affected.
  assert.equal((await login(t.app, user.email, PASSWORD, randomIp())).status, 200);
});

test('4 failures are still allowed: the limit is 5', async () => {
  const user = await makeUser(t);
  for (let i = 0; i < 4; i++) await login(t.app, user.email, 'wrong password', randomIp());
  assert.equal((await login(t.app, user.email, PASSWORD, randomIp())).status, 200);
});

test("a successful sign-in forgets the email's failures", async () => {
  const user = await makeUser(t);
  for (let i = 0; i < 4; i++) await login(t.app, user.email, 'wrong password', randomIp());
  assert.equal((await login(t.app, user.email, PASSWORD, randomIp())).status, 200);
  for (let i = 0; i < 4; i++) await login(t.app, user.email, 'wrong password', randomIp());
  assert.equal((await login(t.app, user.email, PASSWORD, randomIp())).status, 200, '4 + 4 failures with a success between: not throttled');
});

test('failures older than 15 minutes no longer count', async () => {
  const user = await makeUser(t);
  const old = Date.now() - (WINDOW_S + 5) * 1000;
  const ip = randomIp();
  await t.db.kysely
    .insertInto('login_attempts')
    .values(Array.from({ length: 5 }, () => ({ id: newId('lat'), email: user.email, ip, created_at: old })))
    .execute();
  assert.equal((await login(t.app, user.email, PASSWORD, ip)).status, 200);
});

test('Retry-After says when the oldest counted failure leaves the window', async () => {
  const user = await makeUser(t);
  const now = Date.now();
  // The oldest of the five failed 10 minutes ago: 5 minutes left to wait.
  await t.db.kysely
    .insertInto('login_attempts')
    .values([10, 8, 6, 4, 2].map((minutes) => ({ id: newId('lat'), email: user.email, ip: randomIp(), created_at: now - minutes * 60_000 })))
    .execute();
  const res = await login(t.app, user.email, PASSWORD);
  assertError(res, 429, 'Too many sign-in attempts');
  const wait = Number(res.headers['retry-after']);
  assert.ok(wait > 4 * 60 && wait <= 5 * 60, `about 300 s, got ${wait}`);
});
