import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createField, createKpi } from '../../src/modules/definitions/definitions.service.js';
import { type ApiResponse, apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeEmailCampaign, makeTenant, randomEmail } from '../helpers/factories.js';
import { eachStatement, recordStatements, type StatementRecorder } from '../helpers/statements.js';

/**
 * Round trips to PostgreSQL per public write (issue 12): every statement a request sends is one
 * round trip on this driver (pg sends one query at a time and does not pipeline), BEGIN and
 * COMMIT included. The counts are pinned here and written down in docs/performance.md; a change
 * that adds a round trip to a hot path fails this test and has to say why.
 *
 * Counted with the driver's own `Client#query`, in a process that runs only the API (no
 * dispatcher or webhook worker polling), after one warm-up request of the same kind (the first
 * request of a key reads the key; later ones find it in the process's cache).
 */
const onPostgres = Boolean(process.env.DATABASE_URL);

/** Where each count stands today; lower it when a change saves a round trip. */
const PINNED = {
  'POST /api/leads, new contact': 1,
  'POST /api/leads, update': 1,
  'POST /api/leads, update that could not create (no name)': 1,
  'POST /api/leads, update with metadata': 2,
  'POST /api/leads, update naming two identifiers': 2,
  'POST /api/leads, update naming a custom field': 1,
  'POST /api/leads, update naming a custom field defined since the process read it': 2,
  'POST /api/leads, new contact after a lead that only updates found nobody (400)': 1,
  'POST /api/events': 1,
  'POST /api/campaigns/trigger, immediate, known contact, free plan': 2,
  'POST /api/campaigns/trigger, delay, restart of a pending send': 2,
  'POST /api/campaigns/trigger, immediate, lead object (new contact), no allowance': 1,
  'POST /api/campaigns/trigger, immediate, lead object (new contact), campaign not seen by the process yet': 2,
  'POST /api/campaigns/trigger, delay, lead object, restart of a pending send, no allowance': 1,
  'POST /api/campaigns/trigger, immediate, lead object (new contact) naming a custom field and a KPI': 1,
  'POST /api/campaigns/trigger, delay, lead object naming a custom field and a KPI, restart': 1,
  'POST /api/campaigns/cancel, pending send': 1,
  'POST /api/campaigns/cancel, nothing pending': 1,
  'POST /api/leads with an Idempotency-Key, new contact': 4,
  'POST /api/leads with an Idempotency-Key, update': 4,
  'POST /api/events with an Idempotency-Key': 3,
  'POST /api/campaigns/trigger with an Idempotency-Key, immediate, known contact': 5,
  'POST /api/campaigns/cancel with an Idempotency-Key, nothing pending': 3,
} as const;

describe('round trips per public write on PostgreSQL', { skip: !onPostgres && 'PostgreSQL only (DATABASE_URL)' }, () => {
  let t: TestApp;
  let recorder: StatementRecorder;

  before(async () => {
    t = await startTestApp();
    recorder = recordStatements();
  });
  after(async () => {
    recorder.restore();
    await t.close();
  });

  /** The statements `request` sends, after `warmUp` (a request of the same kind) has run once. */
  async function count(request: () => Promise<ApiResponse>, warmUp = request): Promise<string[]> {
    const warm = await warmUp();
    assert.equal(warm.status, 200, JSON.stringify(warm.body));
    const { result: res, statements } = await recorder.during(request);
    // The API key's look-up is the request's, not the write's: cached by the process, it is
    // read again only when the cache entry has aged out (a loaded machine between the two requests).
    const sent = statements.filter((text) => !/\bapi_keys\b/.test(text));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return sent;
  }

  async function tenant() {
    const { accountId, key } = await makeTenant(t.db, t.config);
    const api = apiClient(t.app, key);
    return { accountId, api };
  }

  function pin(line: keyof typeof PINNED, sent: string[]): void {
    assert.equal(sent.length, PINNED[line], `${line}: ${sent.length} statements\n${sent.join('\n')}`);
  }

  test('contact writes', async () => {
    const { accountId, api } = await tenant();
    pin('POST /api/leads, new contact', await count(() => api.post('/api/leads', { email: randomEmail(), name: 'Ada' })));
    const email = randomEmail();
    pin('POST /api/leads, update', await count(() => api.post('/api/leads', { email, name: 'Ada', tags: ['vip'] })));
    pin('POST /api/leads, update that could not create (no name)', await count(() => api.post('/api/leads', { email, tags: ['x'] })));
    // The fallbacks: the update's decision needs what the read finds (the stored metadata, whether
    // the other identifier belongs to someone else): read, then write.
    pin('POST /api/leads, update with metadata', await count(() => api.post('/api/leads', { email, metadata: { plan: 'pro' } })));
    const phone = '+4915112345678';
    pin('POST /api/leads, update naming two identifiers', await count(() => api.post('/api/leads', { email, phone, tags: ['y'] })));
    // A field's definition is decided on as the process last read it (the warm-up read it), and
    // checked by the statement's own read (definitions-seen.ts).
    pin(
      'POST /api/leads, update naming a custom field',
      await count(() => api.post('/api/leads', { email, fields: [{ key: 'no such field', value: 1 }] })),
    );
    // Changed meanwhile: the statement finds other definitions, writes nothing, and the usual write follows.
    await createField(t.db, accountId, { name: 'no such field', type: 'number' });
    const { result, statements } = await recorder.during(() =>
      api.post('/api/leads', { email, fields: [{ key: 'no such field', value: 1 }] }),
    );
    assert.deepEqual(result.body.fields, [{ key: 'no such field', value: 1 }]);
    pin(
      'POST /api/leads, update naming a custom field defined since the process read it',
      statements.filter((text) => !/\bapi_keys\b/.test(text)),
    );
  });

  // A read that locks (FOR UPDATE) outside a transaction holds its lock only to its own end, and
  // makes the statement a transaction of its own (an xid, a WAL record, a commit flushed): the
  // first attempt's reads run autocommit and do not lock; a unit run in a transaction (an
  // Idempotency-Key, a retry after a lost race) does, to its commit.
  test('a lead write locks the contact only inside a transaction', async () => {
    const { api } = await tenant();
    const email = randomEmail();
    await api.post('/api/leads', { email, name: 'Ada' });
    const locks = (sent: string[]) => sent.filter((text) => /\bfor update\b/i.test(text)).length;
    assert.equal(locks(await count(() => api.post('/api/leads', { email, tags: ['a'] }))), 0);
    assert.equal(locks(await count(() => api.post('/api/leads', { email, metadata: { plan: 'pro' } }))), 0);
    const keyed = await recorder.during(() => api.post('/api/leads', { email, tags: ['b'] }, { 'idempotency-key': randomEmail() }));
    assert.equal(keyed.result.status, 200, JSON.stringify(keyed.result.body));
    assert.equal(locks(keyed.statements), 1, keyed.statements.join('\n'));
  });

  test('a lead that can only update, for a contact that does not exist', async () => {
    const { api } = await tenant();
    const { result: res, statements } = await recorder.during(() => api.post('/api/leads', { email: randomEmail(), tags: ['x'] }));
    assert.equal(res.status, 400, JSON.stringify(res.body));
    const sent = statements.filter((text) => !/\bapi_keys\b/.test(text));
    pin('POST /api/leads, new contact after a lead that only updates found nobody (400)', sent);
  });

  test('event writes', async () => {
    const { api } = await tenant();
    const lead = await api.post('/api/leads', { email: randomEmail(), name: 'Ada' });
    pin('POST /api/events', await count(() => api.post('/api/events', { type: 'purchase', leadId: lead.body.id })));
  });

  test('triggers', async () => {
    const { accountId, api } = await tenant();
    const immediate = await makeEmailCampaign(t, accountId, { reentry: true });
    const email = randomEmail();
    pin(
      'POST /api/campaigns/trigger, immediate, known contact, free plan',
      await count(
        () => api.post('/api/campaigns/trigger', { campaignId: immediate.id, lead: email }),
        () => api.post('/api/campaigns/trigger', { campaignId: immediate.id, lead: { email, name: 'Ada' } }),
      ),
    );
    const delayed = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
    pin(
      'POST /api/campaigns/trigger, delay, restart of a pending send',
      await count(() => api.post('/api/campaigns/trigger', { campaignId: delayed.id, lead: email })),
    );
  });

  test('triggers with a lead object (the contact written with the send)', async () => {
    const { accountId, key } = await makeTenant(t.db, t.config, { allowance: null });
    const api = apiClient(t.app, key);
    const immediate = await makeEmailCampaign(t, accountId);
    pin(
      'POST /api/campaigns/trigger, immediate, lead object (new contact), no allowance',
      await count(() => api.post('/api/campaigns/trigger', { campaignId: immediate.id, lead: { email: randomEmail(), name: 'Ada' } })),
    );
    // The write for someone new is decided with the campaign as the process last read it
    // (trigger-decided-first.repo.ts): a campaign it has not read yet is read first.
    const unseen = await makeEmailCampaign(t, accountId);
    pin(
      'POST /api/campaigns/trigger, immediate, lead object (new contact), campaign not seen by the process yet',
      await count(
        () => api.post('/api/campaigns/trigger', { campaignId: unseen.id, lead: { email: randomEmail(), name: 'Ada' } }),
        () => api.post('/api/campaigns/trigger', { campaignId: immediate.id, lead: { email: randomEmail(), name: 'Ada' } }),
      ),
    );
    const delayed = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
    const email = randomEmail();
    pin(
      'POST /api/campaigns/trigger, delay, lead object, restart of a pending send, no allowance',
      await count(() => api.post('/api/campaigns/trigger', { campaignId: delayed.id, lead: { email, name: 'Ada', tags: ['again'] } })),
    );
    // Custom fields and KPIs as the process last read them (the warm-up read them), checked by the statement's read.
    await createField(t.db, accountId, { name: 'City', type: 'string' });
    await createKpi(t.db, accountId, { id: 'orders', name: 'Orders' });
    const withDefinitions = (lead: Record<string, unknown>) => ({
      ...lead,
      fields: [{ key: 'City', value: 'Paris' }],
      kpis: { orders: 1 },
    });
    pin(
      'POST /api/campaigns/trigger, immediate, lead object (new contact) naming a custom field and a KPI',
      await count(() =>
        api.post('/api/campaigns/trigger', { campaignId: immediate.id, lead: withDefinitions({ email: randomEmail(), name: 'Ada' }) }),
      ),
    );
    pin(
      'POST /api/campaigns/trigger, delay, lead object naming a custom field and a KPI, restart',
      await count(() => api.post('/api/campaigns/trigger', { campaignId: delayed.id, lead: withDefinitions({ email }) })),
    );
  });

  test('cancels', async () => {
    const { accountId, api } = await tenant();
    const delayed = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
    const email = randomEmail();
    await api.post('/api/leads', { email, name: 'Ada' });
    const trigger = () => api.post('/api/campaigns/trigger', { campaignId: delayed.id, lead: email });
    const cancel = () => api.post('/api/campaigns/cancel', { campaignId: delayed.id, lead: email });
    pin('POST /api/campaigns/cancel, pending send', await count(cancel, trigger));
    pin('POST /api/campaigns/cancel, nothing pending', await count(cancel));
  });

  // The answer is stored with the effect, in one transaction (docs/decisions.md, "Idempotent
  // retries"): its BEGIN goes with the key's claim, the answer with its COMMIT (db/pg-transaction.ts).
  test('writes with an Idempotency-Key', async () => {
    const { accountId, api } = await tenant();
    const keyed = (path: string, body: unknown) => () => api.post(path, body, { 'idempotency-key': randomEmail() });
    pin(
      'POST /api/leads with an Idempotency-Key, new contact',
      await count(() => keyed('/api/leads', { email: randomEmail(), name: 'Ada' })()),
    );
    const email = randomEmail();
    pin('POST /api/leads with an Idempotency-Key, update', await count(keyed('/api/leads', { email, name: 'Ada', tags: ['vip'] })));
    const lead = await api.post('/api/leads', { email, name: 'Ada' });
    pin('POST /api/events with an Idempotency-Key', await count(keyed('/api/events', { type: 'purchase', leadId: lead.body.id })));
    const campaign = await makeEmailCampaign(t, accountId, { reentry: true });
    pin(
      'POST /api/campaigns/trigger with an Idempotency-Key, immediate, known contact',
      await count(keyed('/api/campaigns/trigger', { campaignId: campaign.id, lead: email })),
    );
    pin(
      'POST /api/campaigns/cancel with an Idempotency-Key, nothing pending',
      await count(keyed('/api/campaigns/cancel', { campaignId: campaign.id, lead: email })),
    );
  });

  test('a batch of lead writes: one statement per item, all in one pipeline with the BEGIN, in one transaction (2 round trips)', async () => {
    const { api } = await tenant();
    const known = Array.from({ length: 5 }, () => randomEmail());
    await api.post('/api/leads/batch', { items: known.map((email) => ({ email, name: 'Ada' })) });
    const items = [
      ...known.map((email) => ({ email, tags: ['batch'] })),
      ...Array.from({ length: 5 }, () => ({ email: randomEmail(), name: 'Bo' })),
    ];
    const sent = await count(() => api.post('/api/leads/batch', { items }));
    // The BEGIN and the run's SAVEPOINT go with the items' pipeline, its RELEASE with the COMMIT.
    assert.equal(sent.length, 2, sent.join('\n'));
    const verbs = eachStatement(sent).map((text) => text.trim().split(/\s/)[0]!.toLowerCase());
    assert.deepEqual(verbs, ['begin', 'savepoint', ...items.map(() => 'with'), 'release', 'commit'], sent.join('\n'));
    // Known contacts with a name (a create could be decided first) and metadata (merged with the
    // stored value, so the update cannot): a read that locks and the write, two statements an
    // item, each its own round trip, not a one-statement attempt before them.
    const merged = known.map((email) => ({ email, name: 'Ada', metadata: { source: 'batch' } }));
    const twice = await count(() => api.post('/api/leads/batch', { items: merged }));
    const transaction = eachStatement(twice).filter((text) => /^\s*(begin|commit|savepoint|release)\b/i.test(text));
    assert.equal(transaction.length, 4, twice.join('\n'));
    assert.equal(twice.length, 2 * merged.length + 1, twice.join('\n'));
  });

  test('a batch of events: the look-up, then every insert in one pipeline (2 round trips, whatever its size)', async () => {
    const { api } = await tenant();
    const lead = await api.post('/api/leads', { email: randomEmail(), name: 'Ada' });
    // 150 events: two inserts of up to 100 rows, sent together.
    const items = Array.from({ length: 150 }, (_, i) => ({ type: 'purchase', leadId: lead.body.id, value: i }));
    const sent = await count(() => api.post('/api/events/batch', { items }));
    assert.equal(sent.length, 2, sent.join('\n'));
    assert.match(sent[1]!, /^pipeline of 2: insert into "events"/);
  });
});
