import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeContact, makeTenant, randomEmail } from '../helpers/factories.js';
import { countContactsWithEmail, countEvents } from './helpers.js';

/**
 * Idempotency-Key on the batch endpoints (issue 10): the whole batch's answer, items refused
 * before the write included, is stored with its effect; a retry replays it and writes nothing.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' });
});
after(() => t.close());

const withKey = (key: string) => ({ 'idempotency-key': key });

describe('batch requests with an Idempotency-Key', () => {
  test('leads batch: the retry replays every item result (a refused one too) and writes no contact or KPI again', async () => {
    const tenant = await makeTenant(t.db, t.config);
    const api = apiClient(t.app, tenant.key);
    const key = randomUUID();
    const email = randomEmail();
    const body = { items: [{ email, name: 'Ada Lovelace', tags: ['vip'] }, { name: 'x' }, { email: 'not an email', name: 'Bad Address' }] };
    const first = await api.post('/api/leads/batch', body, withKey(key));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(
      first.body.results.map((r: { status: number }) => r.status),
      [200, 400, 400],
    );
    const retry = await api.post('/api/leads/batch', body, withKey(key));
    assert.equal(retry.status, 200);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(retry.body, first.body);
    assert.equal(await countContactsWithEmail(t.db, tenant.accountId, email), 1);

    const other = await api.post('/api/leads/batch', { items: [{ email, name: 'Someone Else' }] }, withKey(key));
    assert.equal(other.status, 422, JSON.stringify(other.body));
  });

  test('events batch: the retry replays the results and logs no event twice', async () => {
    const tenant = await makeTenant(t.db, t.config);
    const api = apiClient(t.app, tenant.key);
    const contact = await makeContact(t.db, tenant.accountId);
    const key = randomUUID();
    const body = {
      items: [
        { type: 'visit', leadId: contact.id },
        { type: 'visit', leadId: 'ld_unknown' },
      ],
    };
    const first = await api.post('/api/events/batch', body, withKey(key));
    assert.deepEqual(
      first.body.results.map((r: { status: number }) => r.status),
      [200, 404],
    );
    const retry = await api.post('/api/events/batch', body, withKey(key));
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(retry.body, first.body);
    assert.equal(await countEvents(t.db, tenant.accountId, contact.id), 1);
  });

  test('a batch whose items were all refused before the write stores nothing: the retry runs again', async () => {
    const tenant = await makeTenant(t.db, t.config);
    const api = apiClient(t.app, tenant.key);
    const key = randomUUID();
    const body = { items: [{ email: 123, name: 'Ada Lovelace' }] };
    const first = await api.post('/api/leads/batch', body, withKey(key));
    const retry = await api.post('/api/leads/batch', body, withKey(key));
    assert.deepEqual(retry.body, first.body);
    assert.equal(retry.headers['idempotent-replayed'], undefined);
  });
});
