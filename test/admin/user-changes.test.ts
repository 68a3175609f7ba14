import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertError, login, PASSWORD, signedIn, signIn } from './helpers.js';

/** docs/admin-api.md, Users: role changes, one's own password, an administrator's reset. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const NEW_PASSWORD = 'a brand new passphrase';

test('an administrator makes a member an administrator and back; the role takes effect on the next request', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  assertError(await member.panel.get('/users'), 403, 'Administrators only');
  assert.equal((await admin.panel.patch(`/users/${member.userId}`, { role: 'admin' })).status, 204);
  assert.equal((await member.panel.get('/users')).status, 200);
  const roles = (await admin.panel.get('/users')).body.items.map((u: { id: string; role: string }) => [u.id, u.role]);
  assert.deepEqual(
    roles.sort(),
    [
      [admin.userId, 'admin'],
      [member.userId, 'admin'],
    ].sort(),
  );
  assert.equal((await admin.panel.patch(`/users/${member.userId}`, { role: 'member' })).status, 204);
  assertError(await member.panel.get('/users'), 403, 'Administrators only');
});

test('the last administrator cannot be demoted, not even by themselves; with another one they can step down', async () => {
  const admin = await signedIn(t);
  assertError(await admin.panel.patch(`/users/${admin.userId}`, { role: 'member' }), 400, 'Validation Error', '/role');
  assert.equal((await admin.panel.get('/users')).body.items[0].role, 'admin');
  const other = await signedIn(t, { accountId: admin.accountId });
  assert.equal((await admin.panel.patch(`/users/${admin.userId}`, { role: 'member' })).status, 204);
  assertError(await admin.panel.get('/users'), 403, 'Administrators only');
  assertError(await other.panel.patch(`/users/${other.userId}`, { role: 'member' }), 400, 'Validation Error', '/role');
});

test('a role must be admin or member; an unknown member of the body is refused', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  assertError(await admin.panel.patch(`/users/${member.userId}`, { role: 'owner' }), 400, 'Validation Error', '/role');
  assertError(await admin.panel.patch(`/users/${member.userId}`, { role: 'admin', email: 'x@example.com' }), 400, 'Validation Error');
  assertError(await member.panel.get('/users'), 403, 'Administrators only');
});

test('a member cannot change roles nor reset passwords', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  assertError(await member.panel.patch(`/users/${member.userId}`, { role: 'admin' }), 403, 'Administrators only');
  assertError(await member.panel.patch(`/users/${admin.userId}`, { role: 'member' }), 403, 'Administrators only');
  assertError(await member.panel.post(`/users/${admin.userId}/password`, { password: NEW_PASSWORD }), 403, 'Administrators only');
  assert.equal((await login(t.app, admin.email, PASSWORD)).status, 200);
  assertError(await member.panel.get('/users'), 403, 'Administrators only');
});

test("cannot change the role of, or reset the password of, another account's user (404)", async () => {
  const admin = await signedIn(t);
  const stranger = await signedIn(t);
  assertError(await admin.panel.patch(`/users/${stranger.userId}`, { role: 'member' }), 404, 'User not found');
  assertError(await admin.panel.post(`/users/${stranger.userId}/password`, { password: NEW_PASSWORD }), 404, 'User not found');
  assertError(await admin.panel.patch('/users/usr_unknown', { role: 'member' }), 404, 'User not found');
  assert.equal((await stranger.panel.get('/users')).body.items[0].role, 'admin');
  assert.equal((await login(t.app, stranger.email, PASSWORD)).status, 200);
});

test('a user changes their own password: other sessions end, this one stays, the new password signs in', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  const otherSession = await signIn(t, member.email);
  const res = await member.panel.post('/profile/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
  assert.equal(res.status, 204, JSON.stringify(res.body));
  assert.equal((await member.panel.get('/session')).status, 200);
  assertError(await otherSession.get('/session'), 401, 'Not signed in');
  assert.equal((await admin.panel.get('/session')).status, 200, "another user's session is untouched");
  assertError(await login(t.app, member.email, PASSWORD), 401, 'Invalid email or password');
  assert.equal((await login(t.app, member.email, NEW_PASSWORD)).status, 200);
});

test('changing one own password needs the current one and follows the password rules; a refusal changes nothing', async () => {
  const user = await signedIn(t);
  const otherSession = await signIn(t, user.email);
  assertError(
    await user.panel.post('/profile/password', { currentPassword: 'not the password', newPassword: NEW_PASSWORD }),
    400,
    'Validation Error',
    '/currentPassword',
  );
  assertError(
    await user.panel.post('/profile/password', { currentPassword: PASSWORD, newPassword: 'short' }),
    400,
    'Validation Error',
    '/newPassword',
  );
  assertError(await user.panel.post('/profile/password', { newPassword: NEW_PASSWORD }), 400, 'Validation Error');
  assert.equal((await otherSession.get('/session')).status, 200);
  assert.equal((await login(t.app, user.email, PASSWORD)).status, 200);
});

test('changing one own password needs the CSRF token', async () => {
  const user = await signedIn(t);
  const res = await user.panel.post('/profile/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, {});
  assertError(res, 403, 'Invalid CSRF token');
  assert.equal((await login(t.app, user.email, PASSWORD)).status, 200);
});

test("an administrator sets another user's password: that user is signed out everywhere and signs in with it", async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  assert.equal((await admin.panel.post(`/users/${member.userId}/password`, { password: NEW_PASSWORD })).status, 204);
  assertError(await member.panel.get('/session'), 401, 'Not signed in');
  assert.equal((await admin.panel.get('/session')).status, 200);
  assertError(await login(t.app, member.email, PASSWORD), 401, 'Invalid email or password');
  assert.equal((await login(t.app, member.email, NEW_PASSWORD)).status, 200);
});

test('an administrator cannot reset their own password that way, nor set a password shorter than 8 characters', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  assertError(await admin.panel.post(`/users/${admin.userId}/password`, { password: NEW_PASSWORD }), 400, 'Validation Error', '/id');
  assertError(await admin.panel.post(`/users/${member.userId}/password`, { password: 'short' }), 400, 'Validation Error', '/password');
  assert.equal((await member.panel.get('/session')).status, 200);
  assert.equal((await login(t.app, admin.email, PASSWORD)).status, 200);
});

test('passwords never reach the logs', async () => {
  const admin = await signedIn(t);
  const member = await signedIn(t, { role: 'member', accountId: admin.accountId });
  const secrets = ['first-secret-passphrase', 'second-secret-passphrase', 'wrong-secret-guess'];
  await admin.panel.post(`/users/${member.userId}/password`, { password: secrets[0] });
  const again = await signIn(t, member.email, secrets[0]);
  await again.post('/profile/password', { currentPassword: secrets[2], newPassword: secrets[1] });
  await again.post('/profile/password', { currentPassword: secrets[0], newPassword: secrets[1] });
  assert.ok(t.logs.length > 0, 'the app logged its requests');
  for (const secret of [...secrets, PASSWORD]) {
    assert.ok(!t.logs.some((line) => line.includes(secret)), `no log line holds ${secret}`);
  }
});
