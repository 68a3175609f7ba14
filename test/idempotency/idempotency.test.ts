import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { type Db, openDatabase } from '../../src/db/connect.js';
import { IDEMPOTENCY_TTL_MS, purgeExpiredKeys } from '../../src/modules/idempotency/idempotency.service.js';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeContact, makeEmailCampaign, makeTenant, randomEmail } from '../helpers/factories.js';
import { captureLogger } from '../helpers/harness.js';
import { ageKey, countContactsWithEmail, countEvents, countSends, keyRowExists, sendIds } from './helpers.js';

/**
 * Idempotency-Key on the public API's POSTs (issue 10): a retry answers the first answer and
 * does nothing else; the same key with another body is 422; concurrent duplicates run the
 * effect once; keys expire after 24 hours; keys are per account. The restart case is
 * restart.test.ts.
 */

let t: TestApp;
before(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' });
});
after(() => t.close());

const withKey = (key: string) => ({ 'idempotency-key': key });

/** A tenant with an active API-triggered email campaign (Immediate, re-entry off: a second real trigger is `rejected`). */
async function tenantWithCampaign() {
  const tenant = await makeTenant(t.db, t.config, { allowance: null });
  const { id: campaignId } = await makeEmailCampaign(t, tenant.accountId);
  return { ...tenant, campaignId, api: apiClient(t.app, tenant.key) };
}

describe('a retry with the same key and body', () => {
  test('trigger: answers the stored status and body with Idempotent-Replayed: true, and queues nothing more', async () => {
    const c = await tenantWithCampaign();
    const key = randomUUID();
    const body = { campaignId: c.campaignId, lead: { email: randomEmail(), name: 'Ada Lovelace' } };
    const first = await c.api.post('/api/campaigns/trigger', body, withKey(key));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.status, 'queued');
    assert.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is not a replay');

    const retry = await c.api.post('/api/campaigns/trigger', body, withKey(key));
    assert.equal(retry.status, 200);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(retry.body, first.body, 'the original answer (queued), not `rejected`');
    assert.deepEqual(await sendIds(t.db, c.accountId, c.campaignId), [first.body.sendId]);

    // Without the key the same request runs again: re-entry is off, so it is a rejected send.
    const fresh = await c.api.post('/api/campaigns/trigger', body);
    assert.equal(fresh.body.status, 'rejected');
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
  });

  test('the body members in another order are the same request', async () => {
    const c = await tenantWithCampaign();
    const key = randomUUID();
    const email = randomEmail();
    const first = await c.api.post('/api/leads', { email, name: 'Ada Lovelace', metadata: { a: 1, b: { c: 2, d: 3 } } }, withKey(key));
    assert.equal(first.status, 200);
    const retry = await c.api.post('/api/leads', { metadata: { b: { d: 3, c: 2 }, a: 1 }, name: 'Ada Lovelace', email }, withKey(key));
    assert.equal(retry.status, 200);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(retry.body, first.body);
  });

  test('leads: the contact is written once (the replay says created: true again)', async () => {
    const c = await tenantWithCampaign();
    const key = randomUUID();
    const email = randomEmail();
    const first = await c.api.post('/api/leads', { email, name: 'Ada Lovelace', kpis: {} }, withKey(key));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const retry = await c.api.post('/api/leads', { email, name: 'Ada Lovelace', kpis: {} }, withKey(key));
    assert.deepEqual({ status: retry.status, body: retry.body }, { status: 200, body: first.body });
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(await countContactsWithEmail(t.db, c.accountId, email), 1);
  });

  test('events: the event is recorded once', async () => {
    const c = await tenantWithCampaign();
    const contact = await makeContact(t.db, c.accountId);
    const key = randomUUID();
    const body = { type: 'purchase', leadId: contact.id, value: '12' };
    const first = await c.api.post('/api/events', body, withKey(key));
    assert.equal(first.status, 200);
    const retry = await c.api.post('/api/events', body, withKey(key));
    assert.deepEqual({ status: retry.status, body: retry.body }, { status: 200, body: first.body });
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(await countEvents(t.db, c.accountId, contact.id), 1);
  });

  test('cancel: the replay says cancelled: true, as the first answer did', async () => {
    const c = await tenantWithCampaign();
    const { id: campaignId } = await makeEmailCampaign(t, c.accountId, { mode: 'delay', delaySeconds: 3600 });
    const contact = await makeContact(t.db, c.accountId);
    assert.equal((await c.api.post('/api/campaigns/trigger', { campaignId, lead: contact.id })).body.status, 'pending');
    const key = randomUUID();
    const first = await c.api.post('/api/campaigns/cancel', { campaignId, lead: contact.id }, withKey(key));
    assert.equal(first.body.cancelled, true);
    const retry = await c.api.post('/api/campaigns/cancel', { campaignId, lead: contact.id }, withKey(key));
    assert.deepEqual(retry.body, first.body);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
  });
});

describe('the same key with a different request', () => {
  test('another body answers 422 and does nothing', async () => {
    const c = await tenantWithCampaign();
    const key = randomUUID();
    const first = await c.api.post(
      '/api/campaigns/trigger',
      { campaignId: c.campaignId, lead: { email: randomEmail(), name: 'Ada' } },
      withKey(key),
    );
    assert.equal(first.status, 200);
    const other = await c.api.post(
      '/api/campaigns/trigger',
      { campaignId: c.campaignId, lead: { email: randomEmail(), name: 'Bob' } },
      withKey(key),
    );
    assert.deepEqual(
      { status: other.status, body: other.body },
      {
        status: 422,
        body: {
          statusCode: 422,
          error: 'Unprocessable Entity',
          code: 'IDEMPOTENCY_KEY_REUSED',
          message: 'Idempotency-Key was used with a different request',
        },
      },
    );
    assert.equal(await countSends(t.db, c.accountId, c.campaignId), 1);
  });

  test('the same body on another route answers 422', async () => {
    const c = await tenantWithCampaign();
    const contact = await makeContact(t.db, c.accountId);
    const key = randomUUID();
    assert.equal((await c.api.post('/api/campaigns/cancel', { campaignId: c.campaignId, lead: contact.id }, withKey(key))).status, 200);
    const trigger = await c.api.post('/api/campaigns/trigger', { campaignId: c.campaignId, lead: contact.id }, withKey(key));
    assert.equal(trigger.status, 422);
    assert.equal(await countSends(t.db, c.accountId, c.campaignId), 0);
  });
});

describe('what is not stored', () => {
  test('an error answer is not kept: the retry runs again (and succeeds once the cause is fixed)', async () => {
    const c = await tenantWithCampaign();
    const key = randomUUID();
    const email = randomEmail();
    const body = { campaignId: c.campaignId, lead: email };
    const missing = await c.api.post('/api/campaigns/trigger', body, withKey(key));
    assert.equal(missing.status, 404);
    assert.equal(await keyRowExists(t.db, c.accountId, key), false, 'the rolled-back claim left no row');
    await makeContact(t.db, c.accountId, { email });
    const retry = await c.api.post('/api/campaigns/trigger', body, withKey(key));
    assert.equal(retry.status, 200);
    assert.equal(retry.body.status, 'queued');
    assert.equal(retry.headers['idempotent-replayed'], undefined);
  });

  test('the GET forms ignore the header: each call runs', async () => {
    const c = await tenantWithCampaign();
    const contact = await makeContact(t.db, c.accountId);
    const url = `/api/campaigns/trigger?campaignId=${c.campaignId}&lead=${contact.id}`;
    const key = randomUUID();
    const first = await c.api.get(url, withKey(key));
    const second = await c.api.get(url, withKey(key));
    assert.deepEqual([first.body.status, second.body.status], ['queued', 'rejected']);
    assert.equal(second.headers['idempotent-replayed'], undefined);
  });
});

describe('keys are per account', () => {
  test('the same key in two accounts: two independent requests', async () => {
    const a = await tenantWithCampaign();
    const b = await tenantWithCampaign();
    const key = randomUUID();
    const lead = { email: randomEmail(), name: 'Shared Key' };
    const ra = await a.api.post('/api/campaigns/trigger', { campaignId: a.campaignId, lead }, withKey(key));
    const rb = await b.api.post('/api/campaigns/trigger', { campaignId: b.campaignId, lead }, withKey(key));
    assert.deepEqual([ra.status, rb.status], [200, 200]);
    assert.equal(rb.headers['idempotent-replayed'], undefined, "another account's key is not a replay");
    assert.notEqual(ra.body.sendId, rb.body.sendId);
    assert.equal(rb.body.campaignId, b.campaignId);
  });
});

describe('the key itself', () => {
  const badKey = (value: string) => ({
    status: 400,
    body: {
      statusCode: 400,
      error: 'Bad Request',
      code: 'VALIDATION_ERROR',
      message: 'Validation Error',
      details: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
    },
    value,
  });

  for (const [what, value] of [
    ['256 characters', 'k'.repeat(256)],
    ['empty', ''],
    ['with a space', 'two words'],
    ['with a tab', 'a\tb'],
    ['not ASCII', 'clé'],
  ] as const) {
    test(`a key ${what} answers 400 naming the header, and nothing runs`, async () => {
      const c = await tenantWithCampaign();
      const res = await c.api.post(
        '/api/campaigns/trigger',
        { campaignId: c.campaignId, lead: { email: randomEmail(), name: 'Ada' } },
        withKey(value),
      );
      assert.deepEqual({ status: res.status, body: res.body, value }, badKey(value));
      assert.equal(await countSends(t.db, c.accountId, c.campaignId), 0);
    });
  }

  test('a key of 255 visible characters works', async () => {
    const c = await tenantWithCampaign();
    const key = `${'~'.repeat(200)}${'!'.repeat(55)}`;
    const body = { campaignId: c.campaignId, lead: { email: randomEmail(), name: 'Ada' } };
    assert.equal((await c.api.post('/api/campaigns/trigger', body, withKey(key))).status, 200);
    const retry = await c.api.post('/api/campaigns/trigger', body, withKey(key));
    assert.equal(retry.headers['idempotent-replayed'], 'true');
  });

  test('the header is checked after the key and the body: a bad body is still a body error', async () => {
    const c = await tenantWithCampaign();
    const res = await c.api.post('/api/campaigns/trigger', { campaignId: c.campaignId }, withKey(''));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.details, [{ path: '/lead', message: 'is required' }]);
    const noKey = await apiClient(t.app).post('/api/campaigns/trigger', { campaignId: c.campaignId }, withKey(''));
    assert.equal(noKey.status, 401);
  });
});

describe('expiry (24 hours)', () => {
  test('an expired key is ignored (the retry runs again) and purged', async () => {
    const c = await tenantWithCampaign();
    const contact = await makeContact(t.db, c.accountId);
    const key = randomUUID();
    const body = { type: 'visit', leadId: contact.id };
    const first = await c.api.post('/api/events', body, withKey(key));
    await ageKey(t.db, c.accountId, key, IDEMPOTENCY_TTL_MS - 60_000);
    const within = await c.api.post('/api/events', body, withKey(key));
    assert.equal(within.headers['idempotent-replayed'], 'true', 'still replayed a minute before the 24 hours');
    assert.deepEqual(within.body, first.body);

    await ageKey(t.db, c.accountId, key, 60_001);
    const after = await c.api.post('/api/events', body, withKey(key));
    assert.equal(after.status, 200);
    assert.equal(after.headers['idempotent-replayed'], undefined);
    assert.notEqual(after.body.id, first.body.id);
    assert.equal(await countEvents(t.db, c.accountId, contact.id), 2);
    // The run after expiry took the key over: a retry now replays the new answer.
    const again = await c.api.post('/api/events', body, withKey(key));
    assert.deepEqual(again.body, after.body);

    await ageKey(t.db, c.accountId, key, IDEMPOTENCY_TTL_MS);
    const purged = await purgeExpiredKeys(t.db, Date.now());
    assert.ok(purged >= 1);
    assert.equal(await keyRowExists(t.db, c.accountId, key), false);
  });

  test('an expired key with a different body is not a 422: it is a new request', async () => {
    const c = await tenantWithCampaign();
    const contact = await makeContact(t.db, c.accountId);
    const key = randomUUID();
    await c.api.post('/api/events', { type: 'visit', leadId: contact.id }, withKey(key));
    await ageKey(t.db, c.accountId, key, IDEMPOTENCY_TTL_MS + 1);
    const res = await c.api.post('/api/events', { type: 'signup', leadId: contact.id }, withKey(key));
    assert.equal(res.status, 200);
    assert.equal(res.body.type, 'signup');
  });
});

describe('concurrent duplicates', () => {
  /** A second app on its own connection(s) to the same database: another API process. */
  let other: { app: Awaited<ReturnType<typeof buildApp>>; db: Db };
  before(async () => {
    const db = await openDatabase(t.config, { poolSize: 4 });
    other = { db, app: await buildApp({ config: t.config, db, logger: captureLogger({ level: 'warn' }).logger }) };
    await other.app.ready();
  });
  after(async () => {
    await other.app.close();
    await other.db.close();
  });

  test('10 parallel triggers with one key over two processes: one send; the others replay it or answer 409', async () => {
    const c = await tenantWithCampaign();
    const otherApi = apiClient(other.app, c.key);
    const key = randomUUID();
    const body = { campaignId: c.campaignId, lead: { email: randomEmail(), name: 'Ada Lovelace' } };
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? otherApi : c.api).post('/api/campaigns/trigger', body, withKey(key))),
    );
    const sends = await sendIds(t.db, c.accountId, c.campaignId);
    assert.equal(sends.length, 1, 'one effect');
    const ok = answers.filter((a) => a.status === 200);
    for (const a of ok) assert.deepEqual(a.body, { ...ok[0]!.body, sendId: sends[0], status: 'queued' });
    assert.equal(ok.filter((a) => a.headers['idempotent-replayed'] === undefined).length, 1, 'one first answer');
    for (const a of answers.filter((r) => r.status !== 200)) {
      assert.deepEqual(a.body, {
        statusCode: 409,
        error: 'Conflict',
        code: 'IDEMPOTENCY_KEY_IN_USE',
        message: 'A request with this Idempotency-Key is still being processed',
      });
    }
    // Once it is all over, a retry replays.
    const later = await otherApi.post('/api/campaigns/trigger', body, withKey(key));
    assert.equal(later.headers['idempotent-replayed'], 'true');
    assert.equal(later.body.sendId, sends[0]);
  });

  test('10 parallel lead writes and events with one key each: one contact, one event', async () => {
    const c = await tenantWithCampaign();
    const otherApi = apiClient(other.app, c.key);
    const email = randomEmail();
    const leadKey = randomUUID();
    const leads = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? otherApi : c.api).post('/api/leads', { email, name: 'Ada' }, withKey(leadKey))),
    );
    assert.equal(await countContactsWithEmail(t.db, c.accountId, email), 1);
    for (const r of leads) assert.ok(r.status === 200 || r.status === 409, JSON.stringify(r.body));
    const contactId = leads.find((r) => r.status === 200)!.body.id;
    const eventKey = randomUUID();
    const events = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? otherApi : c.api).post('/api/events', { type: 'visit', leadId: contactId }, withKey(eventKey)),
      ),
    );
    for (const r of events) assert.ok(r.status === 200 || r.status === 409, JSON.stringify(r.body));
    assert.equal(await countEvents(t.db, c.accountId, contactId), 1);
  });

  test('PostgreSQL: while another transaction holds the key, a request answers 409 at once and runs nothing', async (ctx) => {
    if (t.db.engine !== 'postgres') {
      ctx.skip('SQLite runs transactions one at a time: a claim in progress is never met (a duplicate waits and replays)');
      return;
    }
    const c = await tenantWithCampaign();
    const key = randomUUID();
    // Hold the key's lock, as a first request's transaction does while it runs.
    const holder = new pg.Client({ connectionString: t.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock(hashtext($1), hashtext($2))', [c.accountId, key]);
      const body = { campaignId: c.campaignId, lead: { email: randomEmail(), name: 'Ada' } };
      const busy = await c.api.post('/api/campaigns/trigger', body, withKey(key));
      assert.deepEqual(
        { status: busy.status, body: busy.body },
        {
          status: 409,
          body: {
            statusCode: 409,
            error: 'Conflict',
            code: 'IDEMPOTENCY_KEY_IN_USE',
            message: 'A request with this Idempotency-Key is still being processed',
          },
        },
      );
      assert.equal(await countSends(t.db, c.accountId, c.campaignId), 0);
      await holder.query('rollback');
      // The "first request" rolled back: the retry runs.
      const retry = await c.api.post('/api/campaigns/trigger', body, withKey(key));
      assert.equal(retry.status, 200);
      assert.equal(retry.headers['idempotent-replayed'], undefined);
    } finally {
      await holder.end();
    }
  });
});

test('the OpenAPI document lists the header on the four POSTs, not on the GET forms', async () => {
  const doc = (await t.app.inject({ url: '/openapi.json' })).json();
  const header = (op: { parameters?: { in: string; name: string }[] }) =>
    (op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'idempotency-key');
  for (const path of ['/api/leads', '/api/events', '/api/campaigns/trigger', '/api/campaigns/cancel']) {
    assert.ok(header(doc.paths[path].post), `POST ${path}`);
    assert.ok(doc.paths[path].post.responses['422'], `POST ${path} documents 422`);
  }
  for (const path of ['/api/campaigns/trigger', '/api/campaigns/cancel']) assert.ok(!header(doc.paths[path].get), `GET ${path}`);
});
