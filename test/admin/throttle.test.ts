import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { randomEmail } from '../helpers/factories.js';
import { assertError, login, makeUser, PASSWORD, randomIp } from './helpers.js';

/** docs/admin-api.md: 5 failed sign-ins for one email or one IP within 15 minutes, then 429 with Retry-After (decisions.md, Hardening). */

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

test('attempts older than 15 minutes no longer count', async () => {
  const user = await makeUser(t);
  const old = Date.now() - (WINDOW_S + 5) * 1000;
  const ip = randomIp();
  await t.db.kysely
    .insertInto('login_throttle')
    .values([
      { subject: `email:${user.email}`, attempts: 5, window_start: old },
      { subject: `ip:${ip}`, attempts: 5, window_start: old },
    ])
    .execute();
  assert.equal((await login(t.app, user.email, PASSWORD, ip)).status, 200);
});

test('Retry-After says when the window of the 5 counted attempts ends', async () => {
  const user = await makeUser(t);
  // The window started 10 minutes ago: 5 minutes left to wait.
  await t.db.kysely
    .insertInto('login_throttle')
    .values({ subject: `email:${user.email}`, attempts: 5, window_start: Date.now() - 10 * 60_000 })
    .execute();
  const res = await login(t.app, user.email, PASSWORD);
  assertError(res, 429, 'Too many sign-in attempts');
  const wait = Number(res.headers['retry-after']);
  assert.ok(wait > 4 * 60 && wait <= 5 * 60, `about 300 s, got ${wait}`);
});

describe('attempts are counted before the password is checked, so concurrency does not beat the count', () => {
  test('200 concurrent wrong passwords for one email: 5 are checked (401), 195 answer 429', async () => {
    const user = await makeUser(t);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => login(t.app, user.email, `wrong ${i}`, randomIp())));
    assert.deepEqual(statusCounts(answers), { 401: 5, 429: 195 });
    assertThrottled(await login(t.app, user.email, PASSWORD, randomIp()));
  });

  test('100 concurrent sign-ins for 100 emails from one address: 5 are checked (401), 95 answer 429', async () => {
    const ip = randomIp();
    const answers = await Promise.all(Array.from({ length: 100 }, () => login(t.app, randomEmail(), 'wrong password', ip)));
    assert.deepEqual(statusCounts(answers), { 401: 5, 429: 95 });
  });

  test('an IPv6 client counts by its /64: other addresses of the same block share the count', async () => {
    const prefix = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}`;
    for (let i = 1; i <= 5; i++)
      assertError(await login(t.app, randomEmail(), 'wrong password', `${prefix}::${i}`), 401, 'Invalid email or password');
    const user = await makeUser(t);
    assertThrottled(await login(t.app, user.email, PASSWORD, `${prefix}::99`));
  });

  test('successful sign-ins take no place at the address: a user signing in many times is never throttled', async () => {
    const user = await makeUser(t);
    const ip = randomIp();
    for (let i = 0; i < 8; i++) assert.equal((await login(t.app, user.email, PASSWORD, ip)).status, 200);
    // The address's 5 places are all still free for failures.
    for (let i = 0; i < 5; i++) assertError(await login(t.app, randomEmail(), 'wrong password', ip), 401, 'Invalid email or password');
    assertThrottled(await login(t.app, user.email, PASSWORD, ip));
  });

  test('a refused attempt takes no place: the email is free again when its window ends, not later', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 5; i++) await login(t.app, user.email, 'wrong password', randomIp());
    for (let i = 0; i < 10; i++) assertThrottled(await login(t.app, user.email, 'wrong password', randomIp()));
    const [row] = await t.db.kysely
      .selectFrom('login_throttle')
      .select(['attempts'])
      .where('subject', '=', `email:${user.email}`)
      .execute();
    assert.equal(Number(row!.attempts), 5);
  });
});

function statusCounts(answers: { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}
