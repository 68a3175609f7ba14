import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/ids.js';
import { findKeyByValue } from '../../src/modules/keys/keys.service.js';
import { DEFAULT_PAGE_TEXTS } from '../../src/modules/unsubscribe/page-settings.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { insertSend, makeContact, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign } from '../helpers/herald.js';
import { assertError, login, PASSWORD, signedIn } from './helpers.js';

/** Account, users, API keys, custom fields and KPIs of docs/admin-api.md. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

describe('account', () => {
  test('GET: plan, allowance, usedThisMonth and WhatsApp settings (never the token)', async () => {
    const { panel, accountId } = await signedIn(t);
    const res = await panel.get('/account');
    assert.equal(res.status, 200);
    assert.deepEqual(
      { ...res.body, name: undefined },
      {
        id: accountId,
        name: undefined,
        plan: 'free',
        allowance: 1000,
        usedThisMonth: 0,
        whatsapp: { configured: false, phoneNumberId: null },
        unsubscribePage: DEFAULT_PAGE_TEXTS,
      },
    );
  });

  test('usedThisMonth counts as the allowance does: this month, counted statuses, test sends left out', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id: campaignId } = await makeEmailCampaign(t, accountId);
    const { id: contactId } = await makeContact(t.db, accountId);
    const now = Date.now();
    const lastMonth = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1) - 1000;
    const rows = [
      { status: 'sent', at: now, test: 0 },
      { status: 'queued', at: now, test: 0 },
      { status: 'error', at: now, test: 0 },
      { status: 'pending', at: now, test: 0 },
      { status: 'cancelled', at: now, test: 0 },
      { status: 'rejected', at: now, test: 0 },
      { status: 'optout', at: now, test: 0 },
      { status: 'sent', at: lastMonth, test: 0 },
      { status: 'sent', at: now, test: 1 },
    ] as const;
    for (const row of rows)
      await insertSend(t.db, accountId, campaignId, { contactId, status: row.status, at: row.at, sentAt: null, test: row.test });
    const res = await panel.get('/account');
    assert.equal(res.body.usedThisMonth, 4);
  });

  test('PATCH (admin) stores the WhatsApp settings; the token is never shown', async () => {
    const { panel } = await signedIn(t);
    const res = await panel.patch('/account', {
      whatsapp: { phoneNumberId: '1234567890', token: 'EAAB-secret-token', appSecret: 'app-secret' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.whatsapp, { configured: true, phoneNumberId: '1234567890' });
    assert.ok(!JSON.stringify(res.body).includes('EAAB-secret-token'));
    assert.deepEqual((await panel.get('/account')).body.whatsapp, { configured: true, phoneNumberId: '1234567890' });
  });

  test('PATCH validation: whatsapp members typed, nothing else accepted; an empty body changes nothing', async () => {
    const { panel } = await signedIn(t);
    const before = (await panel.get('/account')).body;
    const empty = await panel.patch('/account', {});
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, before);
    assertError(await panel.patch('/account', { whatsapp: { phoneNumberId: '1' } }), 400, 'Validation Error', '/whatsapp/token');
    assertError(await panel.patch('/account', { plan: 'pro' }), 400, 'Validation Error', '/plan');
  });
});

describe('users (admin)', () => {
  test('list, invite with a first password (who can then sign in), delete', async () => {
    const { panel, accountId, email } = await signedIn(t);
    const invited = randomEmail();
    const created = await panel.post('/users', { email: invited, password: 'first password', role: 'member' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.match(created.body.id, /^usr_/);
    const list = await panel.get('/users');
    assert.deepEqual(
      list.body.items.map((u: { email: string; role: string }) => [u.email, u.role]),
      [
        [email, 'admin'],
        [invited, 'member'],
      ],
    );
    assert.ok(
      list.body.items.every(
        (u: Record<string, unknown>) => typeof u.createdAt === 'string' && !('password_hash' in u) && !('passwordHash' in u),
      ),
    );
    const signIn = await login(t.app, invited, 'first password');
    assert.equal(signIn.status, 200);
    assert.equal(signIn.body.account.id, accountId);

    assert.equal((await panel.del(`/users/${created.body.id}`)).status, 204);
    assert.equal((await panel.get('/users')).body.items.length, 1);
    assertError(await login(t.app, invited, 'first password'), 401, 'Invalid email or password');
  });

  test('deleting a user signs them out', async () => {
    const { panel, accountId } = await signedIn(t);
    const other = await signedIn(t, { role: 'member', accountId });
    assert.equal((await other.panel.get('/session')).status, 200);
    assert.equal((await panel.del(`/users/${other.userId}`)).status, 204);
    assertError(await other.panel.get('/session'), 401, 'Not signed in');
  });

  test('an administrator cannot delete their own user (400)', async () => {
    const { panel, userId } = await signedIn(t);
    assertError(await panel.del(`/users/${userId}`), 400, 'Validation Error', '/id');
    assert.equal((await panel.get('/session')).status, 200);
  });

  test('invite validation: bad email, short password, unknown role, duplicate email', async () => {
    const { panel, email } = await signedIn(t);
    assertError(await panel.post('/users', { email: 'nope', password: PASSWORD, role: 'member' }), 400, 'Validation Error', '/email');
    assertError(
      await panel.post('/users', { email: randomEmail(), password: 'short', role: 'member' }),
      400,
      'Validation Error',
      '/password',
    );
    assertError(await panel.post('/users', { email: randomEmail(), password: PASSWORD, role: 'owner' }), 400, 'Validation Error', '/role');
    assertError(await panel.post('/users', { email: randomEmail(), password: PASSWORD }), 400, 'Validation Error', '/role');
    const dup = await panel.post('/users', { email, password: PASSWORD, role: 'member' });
    assert.equal(dup.status, 409);
  });

  test('deleting an unknown user is 404', async () => {
    const { panel } = await signedIn(t);
    assertError(await panel.del(`/users/${newId('usr')}`), 404, 'User not found');
  });
});

describe('API keys (admin)', () => {
  test('create: the value once, the item with state; it works on the public API', async () => {
    const { panel } = await signedIn(t);
    const res = await panel.post('/keys', { name: 'backend', scopes: ['leads:write', 'events:write'] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.key, /^hk_[A-Za-z0-9]{32}$/);
    assert.equal(res.body.name, 'backend');
    assert.deepEqual(res.body.scopes, ['leads:write', 'events:write']);
    assert.equal(res.body.active, true);
    assert.equal(res.body.expiresAt, null);
    assert.equal(res.body.state, 'active');
    assert.ok((await findKeyByValue(t.db, res.body.key))?.active);
    const api = await t.app.inject({
      method: 'POST',
      url: '/api/events',
      headers: { 'x-service-api-key': res.body.key },
      payload: { type: 'x' },
    });
    assert.equal(api.statusCode, 400, 'the key is accepted (the request then fails on its body)');
  });

  test('list shows active, inactive and expired keys; the value can be copied again', async () => {
    const { panel } = await signedIn(t);
    const a = (await panel.post('/keys', { name: 'a', scopes: ['leads:write'] })).body;
    const b = (await panel.post('/keys', { name: 'b', scopes: ['leads:write'], active: false })).body;
    const c = (await panel.post('/keys', { name: 'c', scopes: ['leads:write'], expiresAt: '2020-01-31' })).body;
    const d = (await panel.post('/keys', { name: 'd', scopes: ['leads:write'], expiresAt: '2999-01-01T00:00:00.000Z' })).body;
    const list = await panel.get('/keys');
    assert.deepEqual(
      list.body.items.map((k: { name: string; state: string }) => [k.name, k.state]),
      [
        ['a', 'active'],
        ['b', 'inactive'],
        ['c', 'expired'],
        ['d', 'active'],
      ],
    );
    assert.equal(c.expiresAt, '2020-01-31T23:59:59.999Z');
    assert.equal(d.expiresAt, '2999-01-01T00:00:00.000Z');
    assert.ok(
      list.body.items.every((k: Record<string, unknown>) => !('key' in k)),
      'the list never carries values',
    );
    for (const key of [a, b]) assert.deepEqual((await panel.get(`/keys/${key.id}/value`)).body, { key: key.key });
  });

  test('PATCH: switch off (the API refuses it), rename, rescope, set and clear the expiry', async () => {
    const { panel } = await signedIn(t);
    const key = (await panel.post('/keys', { name: 'k', scopes: ['events:write'] })).body;
    const off = await panel.patch(`/keys/${key.id}`, { active: false });
    assert.equal(off.status, 200);
    assert.equal(off.body.state, 'inactive');
    assert.equal((await findKeyByValue(t.db, key.key))?.active, false);
    const edited = await panel.patch(`/keys/${key.id}`, { active: true, name: 'renamed', scopes: ['leads:read'], expiresAt: '2999-12-31' });
    assert.deepEqual(
      [edited.body.name, edited.body.scopes, edited.body.state, edited.body.expiresAt],
      ['renamed', ['leads:read'], 'active', '2999-12-31T23:59:59.999Z'],
    );
    const cleared = await panel.patch(`/keys/${key.id}`, { expiresAt: null });
    assert.equal(cleared.body.expiresAt, null);
  });

  test('DELETE: 204, gone from the list and from the API', async () => {
    const { panel } = await signedIn(t);
    const key = (await panel.post('/keys', { name: 'k', scopes: ['events:write'] })).body;
    assert.equal((await panel.del(`/keys/${key.id}`)).status, 204);
    assert.deepEqual((await panel.get('/keys')).body.items, []);
    assert.equal(await findKeyByValue(t.db, key.key), undefined);
    assertError(await panel.del(`/keys/${key.id}`), 404, 'API key not found');
  });

  test('validation: unknown scope, no scope, bad expiry, unknown member', async () => {
    const { panel } = await signedIn(t);
    assertError(await panel.post('/keys', { name: 'k', scopes: ['admin'] }), 400, 'Validation Error', '/scopes');
    assertError(await panel.post('/keys', { name: 'k', scopes: [] }), 400, 'Validation Error', '/scopes');
    assertError(
      await panel.post('/keys', { name: 'k', scopes: ['leads:write'], expiresAt: 'next week' }),
      400,
      'Validation Error',
      '/expiresAt',
    );
    assertError(
      await panel.post('/keys', { name: 'k', scopes: ['leads:write'], expiresAt: '2026-02-30' }),
      400,
      'Validation Error',
      '/expiresAt',
    );
    assertError(await panel.post('/keys', { name: ' ', scopes: ['leads:write'] }), 400, 'Validation Error', '/name');
    assertError(await panel.post('/keys', { name: 'k', scopes: 'leads:write' }), 400, 'Validation Error', '/scopes');
    assertError(await panel.post('/keys', { name: 'k', scopes: ['leads:write'], value: 'hk_mine' }), 400, 'Validation Error', '/value');
    assertError(await panel.get(`/keys/${newId('key')}/value`), 404, 'API key not found');
  });
});

describe('custom fields and KPIs', () => {
  test('fields: create, list (by name), 409 on a duplicate name in any case, 400 on an unknown type', async () => {
    const { panel } = await signedIn(t);
    const city = await panel.post('/fields', { name: 'City', type: 'location' });
    assert.equal(city.status, 200);
    assert.match(city.body.id, /^fld_/);
    assert.deepEqual({ ...city.body, id: undefined }, { id: undefined, name: 'City', type: 'location' });
    await panel.post('/fields', { name: 'Age', type: 'number' });
    assert.deepEqual(
      (await panel.get('/fields')).body.items.map((f: { name: string }) => f.name),
      ['Age', 'City'],
    );
    assert.equal((await panel.post('/fields', { name: 'city', type: 'string' })).status, 409);
    assertError(await panel.post('/fields', { name: 'X', type: 'colour' }), 400, 'Validation Error', '/type');
  });

  test('KPIs: create, list, 409 on a duplicate id', async () => {
    const { panel } = await signedIn(t);
    assert.deepEqual((await panel.post('/kpis', { id: 'ltv', name: 'Lifetime value' })).body, { id: 'ltv', name: 'Lifetime value' });
    assert.deepEqual((await panel.get('/kpis')).body.items, [{ id: 'ltv', name: 'Lifetime value' }]);
    assert.equal((await panel.post('/kpis', { id: 'ltv', name: 'Again' })).status, 409);
    assertError(await panel.post('/kpis', { id: '', name: 'x' }), 400, 'Validation Error', '/id');
  });
});
