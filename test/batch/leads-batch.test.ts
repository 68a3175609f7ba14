import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_BATCH_ITEMS } from '../../src/http/batch.js';
import { contactTenant, useTestApp } from '../contacts/helpers.js';
import { apiClient, assertMissingScope, startTestApp } from '../helpers/app.js';
import { makeField, makeKpi, makeTenant, randomEmail, randomPhone, uniq } from '../helpers/factories.js';

/**
 * POST /api/leads/batch (decisions.md, Batch writes): every item exactly as POST /api/leads
 * would answer it, in order; one bad item fails alone and leaves nothing behind.
 */
const app = useTestApp();

/** A tenant with the custom field `city` (text) and the KPI `score`. */
async function tenant(options: { scopes?: string[] } = {}) {
  const t = await contactTenant(app(), options);
  await makeField(app().db, t.accountId, 'city', 'string');
  await makeKpi(app().db, t.accountId, 'score');
  return { ...t, batch: (items: unknown) => t.api.post('/api/leads/batch', { items }) };
}

/** A body without the parts that differ between two accounts (the contact id). */
const withoutId = (body: Record<string, unknown>) => {
  const { id: _id, ...rest } = body;
  return rest;
};

/**
 * Two batches over the same ten known contacts at once, the second in the opposite order, three
 * rounds: every item answers 200 and `check` holds for each contact after the round.
 */
async function raceInOppositeOrders(
  item: (email: string, side: 'one' | 'two', round: number) => Record<string, unknown>,
  check: (profile: Awaited<ReturnType<Awaited<ReturnType<typeof tenant>>['profile']>>, round: number) => void,
): Promise<void> {
  const t = await tenant();
  const emails = Array.from({ length: 10 }, () => randomEmail());
  await t.batch(emails.map((email) => ({ email, name: 'Known' })));
  for (let round = 0; round < 3; round++) {
    const [one, two] = await Promise.all([
      t.batch(emails.map((email) => item(email, 'one', round))),
      t.batch([...emails].reverse().map((email) => item(email, 'two', round))),
    ]);
    for (const [i, email] of emails.entries()) {
      const other = emails.length - 1 - i;
      assert.equal(one.body.results[i].status, 200, JSON.stringify(one.body.results[i]));
      assert.equal(two.body.results[other].status, 200, JSON.stringify(two.body.results[other]));
      check(await t.profile({ email }), round);
    }
  }
}

describe('POST /api/leads/batch: each item as its single call', () => {
  test('results come in the order of the items, good and bad mixed, with the bodies and warnings of single calls', async () => {
    const batch = await tenant();
    const single = await tenant();
    const emails = [randomEmail(), randomEmail(), randomEmail()];
    const items = [
      { email: emails[0], name: 'Ada Lovelace', tags: ['VIP Client'], fields: [{ key: 'City', value: 'Paris' }], kpis: { score: 2 } },
      { email: emails[1], name: 'Unknown Bits', fields: [{ key: 'nope', value: 1 }], kpis: { score: 'many', other: 1 } },
      { email: 'not-an-email', name: 'Bad Address' },
      { email: emails[2] },
      { nmae: 'typo', email: randomEmail() },
      'not an object',
      { email: emails[0], kpis: { score: 3 }, tagsRemove: ['vip-client'] },
      { email: randomEmail(), name: 'Nul\u0000Name' },
      { phone: randomPhone(), name: 'Phone Only', metadata: { plan: 'pro' }, note: { text: 'hi', createdBy: 'ops' } },
    ];
    const res = await batch.batch(items);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['results']);
    assert.equal(res.body.results.length, items.length);

    // The same items, one call each, in another account with the same definitions.
    for (const [i, item] of items.entries()) {
      // As JSON text, so the item that is a bare string reaches the route as JSON too.
      const alone = await single.api.call({
        method: 'POST',
        url: '/api/leads',
        payload: JSON.stringify(item),
        headers: { 'content-type': 'application/json' },
      });
      const result = res.body.results[i];
      assert.deepEqual(Object.keys(result).sort(), ['body', 'status']);
      assert.equal(result.status, alone.status, `item ${i}: ${JSON.stringify(result.body)}`);
      if (alone.status === 200) {
        assert.deepEqual(withoutId(result.body), withoutId(alone.body), `item ${i}`);
        assert.match(result.body.id, /^ld_/);
      } else {
        assert.deepEqual(result.body, alone.body, `item ${i}`);
      }
    }
    assert.deepEqual(
      res.body.results.map((r: { status: number }) => r.status),
      [200, 200, 400, 400, 400, 400, 200, 400, 200],
    );
    // The warnings of item 1, as the single endpoint words them.
    assert.deepEqual(res.body.results[1].body.warnings, [
      { path: '/fields/0', message: "unknown custom field 'nope'" },
      { path: '/kpis/score', message: "value of KPI 'score' must be a number" },
      { path: '/kpis/other', message: "unknown KPI 'other'" },
    ]);
    assert.deepEqual(res.body.results[5].body.details, [{ path: '/', message: 'the request body must be a JSON object' }]);
    assert.deepEqual(res.body.results[7].body.details, [{ path: '/name', message: 'must not contain the NUL character (U+0000)' }]);

    const ada = await batch.profile({ email: emails[0] });
    assert.equal(ada?.id, res.body.results[0].body.id);
    assert.deepEqual(ada?.tags, []);
    assert.deepEqual(ada?.kpis, { score: 5 });
    assert.equal(await batch.profile({ email: emails[2] }), undefined, 'a failed item created nothing');
  });

  test('the same email twice: the second item updates the contact the first created, like two calls in a row', async () => {
    const t = await tenant();
    const email = randomEmail();
    const res = await t.batch([
      { email, name: 'First Write', tags: ['a'] },
      { email, name: 'Second Write', tags: ['b'], kpis: { score: 1 } },
      { email: email.toUpperCase(), kpis: { score: 1 } },
    ]);
    assert.equal(res.status, 200);
    const [first, second, third] = res.body.results;
    assert.equal(first.body.created, true);
    assert.equal(second.body.created, false);
    assert.equal(third.body.created, false);
    assert.equal(second.body.id, first.body.id);
    assert.equal(third.body.id, first.body.id);
    const profile = await t.profile({ email });
    assert.equal(profile?.name, 'Second Write');
    assert.deepEqual(profile?.tags.sort(), ['a', 'b']);
    assert.deepEqual(profile?.kpis, { score: 2 });
  });

  test('an item that fails half-way leaves nothing behind: not the rename, not the tags', async () => {
    const t = await tenant();
    const email = randomEmail();
    const big = (prefix: string) => Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`${prefix}${i}`, 'x'.repeat(1000)]));
    assert.equal((await t.lead({ email, name: 'Kept Name', metadata: big('a') })).status, 200);
    const res = await t.batch([
      { email, name: 'Renamed Name', tags: ['planted'], metadata: big('b') },
      { email, kpis: { score: 4 } },
    ]);
    assert.equal(res.status, 200);
    assert.equal(res.body.results[0].status, 400);
    assert.deepEqual(res.body.results[0].body.details, [
      { path: '/metadata', message: 'must be at most 16 KiB once merged with the stored metadata (as JSON)' },
    ]);
    assert.equal(res.body.results[1].status, 200, 'the next item is applied');
    const profile = await t.profile({ email });
    assert.equal(profile?.name, 'Kept Name');
    assert.deepEqual(profile?.tags, []);
    assert.deepEqual(Object.keys(profile?.metadata ?? {}).sort(), Object.keys(big('a')).sort());
    assert.deepEqual(profile?.kpis, { score: 4 });
  });

  test('failures spread over several transactions: every other item is applied once, in order', async () => {
    const t = await tenant();
    const emails = Array.from({ length: 20 }, () => randomEmail());
    // 250 items (three chunks of the SQLite path), a failure every 7th: a new address without a name.
    const items = Array.from({ length: 250 }, (_, i) =>
      i % 7 === 3 ? { email: randomEmail(), kpis: { score: 100 } } : { email: emails[i % 20], name: `Name ${i}`, kpis: { score: 1 } },
    );
    const res = await t.batch(items);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.results.map((r: { status: number }) => r.status),
      items.map((_, i) => (i % 7 === 3 ? 400 : 200)),
    );
    for (const [k, email] of emails.entries()) {
      const applied = items.filter((item, i) => i % 7 !== 3 && item.email === email);
      const firstAt = items.findIndex((item, i) => i % 7 !== 3 && item.email === email);
      assert.equal(res.body.results[firstAt].body.created, true, `email ${k} is created by its first item`);
      const profile = await t.profile({ email });
      assert.deepEqual(profile?.kpis, { score: applied.length }, `email ${k}`);
      assert.equal(profile?.name, applied.at(-1)?.name);
    }
  });

  test("an identifier of another contact is that item's 409, the others are applied", async () => {
    const t = await tenant();
    const [a, b] = [randomEmail(), randomEmail()];
    await t.lead({ email: a, name: 'Owner One' });
    await t.lead({ email: b, name: 'Owner Two' });
    const res = await t.batch([
      { email: a, name: 'Clash' },
      { id: (await t.profile({ email: a }))!.id, email: b },
      { email: b, tags: ['ok'] },
    ]);
    assert.deepEqual(
      res.body.results.map((r: { status: number }) => r.status),
      [200, 409, 200],
    );
    assert.deepEqual(res.body.results[1].body, {
      statusCode: 409,
      error: 'Conflict',
      code: 'IDENTIFIER_CONFLICT',
      message: 'Identifier belongs to another contact',
    });
    assert.deepEqual((await t.profile({ email: a }))?.emails, [a]);
  });

  test('two concurrent batches creating the same new contacts make one contact per address', async () => {
    const t = await tenant();
    const emails = Array.from({ length: 10 }, () => randomEmail());
    const [one, two] = await Promise.all([
      t.batch(emails.map((email) => ({ email, name: 'Racer One', kpis: { score: 1 } }))),
      t.batch(emails.map((email) => ({ email, name: 'Racer Two', kpis: { score: 1 } }))),
    ]);
    for (const [i, email] of emails.entries()) {
      assert.equal(one.body.results[i].status, 200, JSON.stringify(one.body.results[i]));
      assert.equal(two.body.results[i].status, 200, JSON.stringify(two.body.results[i]));
      assert.equal(one.body.results[i].body.id, two.body.results[i].body.id);
      assert.deepEqual((await t.profile({ email }))?.kpis, { score: 2 });
    }
  });

  test('two concurrent batches updating the same contacts in opposite orders, decided before their reads: every item applied', async () => {
    // One identifier, tags only: each item is one statement that updates what it finds
    // (PostgreSQL), taking the contacts' row locks in opposite orders: a deadlock is PostgreSQL's
    // to break, and the chunk it aborts runs again, item by item.
    await raceInOppositeOrders(
      (email, side, round) => ({ email, tags: [`${side}${round}`] }),
      (profile, round) => assert.ok(profile?.tags.includes(`one${round}`) && profile.tags.includes(`two${round}`), JSON.stringify(profile)),
    );
  });

  test('two concurrent batches updating the same contacts: every item applied, metadata merged from both', async () => {
    // Metadata is merged with the stored value: decided after a read that locks (in a batch's
    // transaction), never lost to the other batch's write.
    await raceInOppositeOrders(
      (email, side, round) => ({ email, metadata: { [`${side}${round}`]: round }, tags: [`${side}${round}`] }),
      (profile, round) => {
        assert.equal(profile?.metadata?.[`one${round}`], round);
        assert.equal(profile?.metadata?.[`two${round}`], round);
        assert.ok(profile?.tags.includes(`one${round}`) && profile.tags.includes(`two${round}`));
      },
    );
  });
});

describe('POST /api/leads/batch: the request as a whole', () => {
  test(`empty, missing or over ${MAX_BATCH_ITEMS} items answer 400 and write nothing`, async () => {
    const t = await tenant();
    const email = randomEmail();
    const tooMany = Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => ({ email, name: 'Never Written' }));
    for (const [body, details] of [
      [{ items: [] }, [{ path: '/items', message: 'must be a list of 1 to 1000 items' }]],
      [{ items: tooMany }, [{ path: '/items', message: 'must be a list of 1 to 1000 items' }]],
      [{ items: { email } }, [{ path: '/items', message: 'must be a list of 1 to 1000 items' }]],
      [{}, [{ path: '/items', message: 'is required' }]],
      [{ items: [{ email, name: 'Never Written' }], extra: 1 }, [{ path: '/extra', message: 'is not an accepted member' }]],
    ] as const) {
      const res = await t.api.post('/api/leads/batch', body);
      assert.deepEqual(
        res.body,
        { statusCode: 400, error: 'Bad Request', code: 'VALIDATION_ERROR', message: 'Validation Error', details },
        JSON.stringify(body).slice(0, 80),
      );
    }
    assert.equal(await t.profile({ email }), undefined);
  });

  test(`${MAX_BATCH_ITEMS} items (over 1 MiB of JSON) are accepted, each answered`, async () => {
    const t = await tenant();
    const prefix = uniq('bulk');
    const items = Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => ({
      email: `${prefix}-${i}@example.com`,
      name: `Bulk Contact ${i}`,
      metadata: { padding: 'p'.repeat(1100) },
    }));
    assert.ok(JSON.stringify({ items }).length > 1024 * 1024);
    const res = await t.batch(items);
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    assert.equal(res.body.results.length, MAX_BATCH_ITEMS);
    assert.ok(res.body.results.every((r: { status: number; body: { created: boolean } }) => r.status === 200 && r.body.created));
    assert.equal((await t.profile({ email: `${prefix}-999@example.com` }))?.name, 'Bulk Contact 999');
  });

  test('a body over 10 MiB answers 413 Payload Too Large', async () => {
    const t = await tenant();
    const items = Array.from({ length: 11 }, () => ({
      email: randomEmail(),
      name: 'Too Large',
      note: { text: 'n'.repeat(1024 * 1024), createdBy: 'x' },
    }));
    const res = await t.batch(items);
    assert.deepEqual(res.body, { statusCode: 413, error: 'Payload Too Large', code: 'PAYLOAD_TOO_LARGE', message: 'Payload Too Large' });
  });

  test('a key without leads:write is refused as a whole (403), nothing written', async () => {
    const t = await tenant({ scopes: ['events:write', 'campaigns:trigger'] });
    const email = randomEmail();
    const res = await t.batch([{ email, name: 'Not Allowed' }]);
    assertMissingScope(res, 'leads:write');
    assert.equal(await t.profile({ email }), undefined);
  });

  test('a batch counts as one request against the rate limit, whatever its number of items', async () => {
    const limited = await startTestApp({ RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_SECOND: '1' });
    try {
      const { key } = await makeTenant(limited.db, limited.config);
      const api = apiClient(limited.app, key);
      const batchOf50 = () =>
        api.post('/api/leads/batch', { items: Array.from({ length: 50 }, () => ({ email: randomEmail(), name: 'Rate Limited' })) });
      // Sent together, so the bucket (3 at once, 1 a second) cannot refill in between: 150 items take 3 tokens.
      const statuses = (await Promise.all([batchOf50(), batchOf50(), batchOf50(), batchOf50()])).map((r) => r.status);
      assert.deepEqual(statuses.sort(), [200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });

  test("another account's contact id is, per item, as unknown as a made-up one", async () => {
    const owner = await tenant();
    const other = await tenant();
    const email = randomEmail();
    const victim = (await owner.lead({ email, name: 'Owner Contact' })).body.id;
    const res = await other.batch([
      { id: victim, name: 'Rename Attempt' },
      { id: victim, email: randomEmail(), name: 'New One' },
    ]);
    assert.equal(res.body.results[0].status, 400);
    assert.deepEqual(
      res.body.results[0].body.details.map((d: { path: string }) => d.path),
      ['/email'],
    );
    assert.equal(res.body.results[1].body.created, true);
    assert.notEqual(res.body.results[1].body.id, victim);
    assert.equal((await owner.profile({ id: victim }))?.name, 'Owner Contact');
  });

  test('leads:write does not open the events batch', async () => {
    const t = await tenant({ scopes: ['leads:write'] });
    const res = await t.api.post('/api/events/batch', { items: [{ type: 'visit', leadId: 'ld_x' }] });
    assertMissingScope(res, 'events:write');
  });
});
