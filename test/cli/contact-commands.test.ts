import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { runHerald } from '../helpers/cli.js';
import { randomEmail, randomPhone } from '../helpers/factories.js';
import { processEnv } from '../helpers/harness.js';

/** Round trips: the CLI provisions, the API writes, the CLI reads back what the API stored. */
let t: TestApp;
let env: Record<string, string>;
before(async () => {
  t = await startTestApp();
  env = processEnv(t);
});
after(() => t.close());

async function ok(...args: string[]) {
  const result = await runHerald(args, env);
  assert.equal(result.code, 0, `herald ${args.join(' ')} failed: ${result.stderr}`);
  return result.json;
}

/** An account provisioned entirely through the CLI, and a contact written through the API. */
async function provision() {
  const { id: account } = await ok('account', 'create', '--name', 'Round Trip');
  const { key } = await ok('key', 'create', '--account', account, '--name', 'backend', '--scopes', 'leads:write,events:write');
  await ok('field', 'create', '--account', account, '--name', 'City', '--type', 'location');
  await ok('kpi', 'create', '--account', account, '--id', 'ltv', '--name', 'Lifetime value');
  const email = randomEmail();
  const phone = randomPhone();
  const api = apiClient(t.app, key);
  const lead = await api.post('/api/leads', {
    email,
    phone,
    name: 'Ada Lovelace',
    tags: ['Black Friday'],
    fields: [{ key: 'city', value: 'Paris' }],
    kpis: { ltv: 120 },
    metadata: { source: 'ads' },
    note: { text: 'Called back', createdBy: 'sales' },
    tracker: 'visitor-1',
  });
  assert.equal(lead.status, 200, JSON.stringify(lead.body));
  return { account, api, email, phone, leadId: lead.body.id as string };
}

describe('herald contact', () => {
  test('show prints what the API stored, found by id, email or phone', async () => {
    const c = await provision();
    const byId = await ok('contact', 'show', '--account', c.account, '--lead', c.leadId);
    assert.equal(byId.id, c.leadId);
    assert.equal(byId.name, 'Ada Lovelace');
    assert.deepEqual(byId.emails, [c.email]);
    assert.deepEqual(byId.phones, [c.phone]);
    assert.deepEqual(byId.tags, ['black-friday']);
    assert.deepEqual(byId.fields, { City: 'Paris' });
    assert.deepEqual(byId.kpis, { ltv: 120 });
    assert.deepEqual(byId.metadata, { source: 'ads' });
    assert.deepEqual(byId.trackers, ['visitor-1']);
    assert.equal(byId.notes.length, 1);
    assert.deepEqual({ text: byId.notes[0].text, createdBy: byId.notes[0].createdBy }, { text: 'Called back', createdBy: 'sales' });
    assert.deepEqual([byId.archived, byId.optedOut], [false, false]);
    for (const stamp of [byId.createdAt, byId.updatedAt, byId.notes[0].createdAt])
      assert.match(stamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.deepEqual(await ok('contact', 'show', '--account', c.account, '--email', c.email.toUpperCase()), byId);
    assert.deepEqual(await ok('contact', 'show', '--account', c.account, '--phone', c.phone), byId);
  });

  test('show: an unknown contact, another account and a wrong lookup are refused', async () => {
    const c = await provision();
    const { id: other } = await ok('account', 'create', '--name', 'Other');
    for (const args of [
      ['--lead', 'ld_nope'],
      ['--email', 'nobody@example.com'],
    ]) {
      const res = await runHerald(['contact', 'show', '--account', c.account, ...args], env);
      assert.deepEqual([res.code, res.stderr.trim(), res.stdout], [1, 'herald: Lead not found', '']);
    }
    const foreign = await runHerald(['contact', 'show', '--account', other, '--lead', c.leadId], env);
    assert.deepEqual([foreign.code, foreign.stderr.trim()], [1, 'herald: Lead not found']);
    const two = await runHerald(['contact', 'show', '--account', c.account, '--lead', c.leadId, '--email', c.email], env);
    assert.equal(two.code, 2);
  });

  test('update archives and opts out; the next API write un-archives', async () => {
    const c = await provision();
    assert.deepEqual(
      await ok('contact', 'update', '--account', c.account, '--lead', c.leadId, '--archived', 'true', '--opted-out', 'true'),
      { id: c.leadId },
    );
    const shown = await ok('contact', 'show', '--account', c.account, '--lead', c.leadId);
    assert.deepEqual([shown.archived, shown.optedOut], [true, true]);
    await c.api.post('/api/leads', { email: c.email, tags: ['back'] });
    const after = await ok('contact', 'show', '--account', c.account, '--lead', c.leadId);
    assert.deepEqual([after.archived, after.optedOut], [false, true], 'a write lists the contact again; the opt-out stays');
  });

  test('activity lists events and notes newest first, in the interfaces.md shapes', async () => {
    const c = await provision();
    const ev = await c.api.post('/api/events', {
      type: 'purchase',
      leadId: c.leadId,
      value: 49.9,
      metadata: { sku: 'A1' },
      url: 'https://shop.example.com/p?x=1',
    });
    assert.equal(ev.status, 200);
    const { items } = await ok('contact', 'activity', '--account', c.account, '--lead', c.leadId);
    assert.deepEqual(
      items.map((i: { kind: string }) => i.kind),
      ['event', 'note'],
    );
    assert.deepEqual(items[0], {
      kind: 'event',
      at: ev.body.createdAt,
      id: ev.body.id,
      type: 'purchase',
      value: '49.9',
      metadata: { sku: 'A1' },
      url: 'shop.example.com/p',
    });
    assert.deepEqual(Object.keys(items[1]).sort(), ['at', 'createdBy', 'kind', 'text']);
    const foreign = await runHerald(
      ['contact', 'activity', '--account', (await ok('account', 'create', '--name', 'X')).id, '--lead', c.leadId],
      env,
    );
    assert.equal(foreign.code, 1);
  });

  test('erase removes the contact for good; another account, or an unknown id, is Lead not found', async () => {
    const c = await provision();
    const { id: other } = await ok('account', 'create', '--name', 'Other');
    const foreign = await runHerald(['contact', 'erase', '--account', other, '--lead', c.leadId], env);
    assert.deepEqual([foreign.code, foreign.stderr.trim()], [1, 'herald: Lead not found']);
    assert.equal((await ok('contact', 'show', '--account', c.account, '--lead', c.leadId)).id, c.leadId);
    assert.deepEqual(await ok('contact', 'erase', '--account', c.account, '--lead', c.leadId), {
      id: c.leadId,
      sendsAnonymized: 0,
      sendsCancelled: 0,
      events: 0,
    });
    const gone = await runHerald(['contact', 'show', '--account', c.account, '--email', c.email], env);
    assert.deepEqual([gone.code, gone.stderr.trim()], [1, 'herald: Lead not found']);
    const again = await runHerald(['contact', 'erase', '--account', c.account, '--lead', c.leadId], env);
    assert.deepEqual([again.code, again.stderr.trim()], [1, 'herald: Lead not found']);
  });
});
