import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeField, makeKpi, randomEmail, uniq } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();

test('a KPI write adds to the stored total instead of replacing it', async () => {
  const t = await contactTenant(app());
  await makeKpi(app().db, t.accountId, 'purchases');
  const email = randomEmail();
  await t.lead({ email, name: 'Buyer', kpis: { purchases: 2 } });
  const res = await t.lead({ email, kpis: { purchases: 3.5 } });
  assert.deepEqual(res.body.kpis, { purchases: 3.5 });
  assert.deepEqual((await t.profile({ email }))?.kpis, { purchases: 5.5 });
  await t.lead({ email, kpis: { purchases: -1 } });
  assert.deepEqual((await t.profile({ email }))?.kpis, { purchases: 4.5 });
});

test('a numeric string KPI value is accepted and echoed as a number', async () => {
  const t = await contactTenant(app());
  await makeKpi(app().db, t.accountId, 'score');
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Stringy', kpis: { score: ' 12.25 ' } });
  assert.deepEqual(res.body.kpis, { score: 12.25 });
  assert.deepEqual(res.body.warnings, []);
  assert.deepEqual((await t.profile({ email }))?.kpis, { score: 12.25 });
});

test('an unknown KPI id or a non-number value is skipped with a /kpis/<id> warning; the others apply', async () => {
  const t = await contactTenant(app());
  await makeKpi(app().db, t.accountId, 'visits');
  await makeKpi(app().db, t.accountId, 'spent');
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Mixed KPIs', kpis: { visits: 1, spent: 'lots', nope: 3, 'a/b': 1 } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.kpis, { visits: 1 });
  assert.deepEqual(res.body.warnings, [
    { path: '/kpis/spent', message: "value of KPI 'spent' must be a number" },
    { path: '/kpis/nope', message: "unknown KPI 'nope'" },
    { path: '/kpis/a~1b', message: "unknown KPI 'a/b'" },
  ]);
  assert.deepEqual((await t.profile({ email }))?.kpis, { visits: 1 });
});

test('KPI ids are exact: another case is unknown', async () => {
  const t = await contactTenant(app());
  await makeKpi(app().db, t.accountId, 'Visits');
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Exact Ids', kpis: { visits: 1 } });
  assert.deepEqual(res.body.warnings, [{ path: '/kpis/visits', message: "unknown KPI 'visits'" }]);
  assert.deepEqual((await t.profile({ email }))?.kpis, {});
});

test('fields and KPIs in one write are each matched against their own definitions', async () => {
  const t = await contactTenant(app());
  await makeField(app().db, t.accountId, 'City', 'string');
  await makeKpi(app().db, t.accountId, 'visits');
  // A KPI named like the field and a field named like the KPI are unknown: the two kinds never mix.
  const email = randomEmail();
  const res = await t.lead({
    email,
    name: 'Both Kinds',
    fields: [
      { key: 'city', value: 'Lyon' },
      { key: 'visits', value: 'x' },
    ],
    kpis: { visits: 2, City: 1 },
  });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.fields, [{ key: 'City', value: 'Lyon' }]);
  assert.deepEqual(res.body.kpis, { visits: 2 });
  assert.deepEqual(res.body.warnings, [
    { path: '/fields/1', message: "unknown custom field 'visits'" },
    { path: '/kpis/City', message: "unknown KPI 'City'" },
  ]);
  const profile = await t.profile({ email });
  assert.deepEqual([profile?.fields, profile?.kpis], [{ City: 'Lyon' }, { visits: 2 }]);
});

for (const bad of [null, true, [1], { n: 1 }, '1,5', '']) {
  test(`KPI value ${JSON.stringify(bad)} is not a number: warning, nothing added`, async () => {
    const t = await contactTenant(app());
    await makeKpi(app().db, t.accountId, 'points');
    const email = randomEmail();
    await t.lead({ email, name: 'Points', kpis: { points: 10 } });
    const res = await t.lead({ email, kpis: { points: bad } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.warnings, [{ path: '/kpis/points', message: "value of KPI 'points' must be a number" }]);
    assert.deepEqual((await t.profile({ email }))?.kpis, { points: 10 });
  });
}

test('metadata is merged key by key; keys not sent stay; a key sent as null is stored as null', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Meta', metadata: { plan: 'free', source: 'ads', nested: { a: 1 } } });
  const res = await t.lead({ email, metadata: { plan: 'pro', source: null, nested: { b: 2 } } });
  assert.deepEqual(res.body.metadata, { plan: 'pro', source: null, nested: { b: 2 } });
  assert.deepEqual((await t.profile({ email }))?.metadata, { plan: 'pro', source: null, nested: { b: 2 } });
  await t.lead({ email, metadata: { extra: [1, 2] } });
  assert.deepEqual((await t.profile({ email }))?.metadata, { plan: 'pro', source: null, nested: { b: 2 }, extra: [1, 2] });
});

test('metadata over 16 KiB is 400 at /metadata and changes nothing', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Too Big', metadata: { blob: 'x'.repeat(17 * 1024) } });
  assert.equal(res.status, 400);
  assert.deepEqual(
    res.body.details.map((d: { path: string }) => d.path),
    ['/metadata'],
  );
  assert.equal(await t.profile({ email }), undefined);
});

test('metadata that only goes past 16 KiB once merged is 400 and leaves the contact unchanged', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Nearly Full', metadata: { a: 'x'.repeat(10 * 1024) } });
  const before = await t.profile({ email });
  const res = await t.lead({ email, name: 'Changed Name', tags: ['t'], metadata: { b: 'y'.repeat(10 * 1024) } });
  assert.equal(res.status, 400);
  assert.deepEqual(
    res.body.details.map((d: { path: string }) => d.path),
    ['/metadata'],
  );
  assert.deepEqual(await t.profile({ email }), before);
});

test('a note is added with its text, author and time; notes accumulate', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const started = Date.now();
  const res = await t.lead({ email, name: 'Noted', note: { text: 'First call', createdBy: 'alice' } });
  assert.deepEqual(res.body.note, { text: 'First call', createdBy: 'alice' });
  await t.lead({ email, note: { text: 'Second call', createdBy: 'bob' } });
  const notes = (await t.profile({ email }))?.notes ?? [];
  assert.deepEqual(
    notes.map((n) => [n.text, n.createdBy]),
    [
      ['First call', 'alice'],
      ['Second call', 'bob'],
    ],
  );
  assert.ok(Date.parse(notes[0]!.createdAt) >= started - 1000);
  assert.match(notes[0]!.createdAt, /\.\d{3}Z$/);
});

for (const [note, path] of [
  [{ text: '', createdBy: 'alice' }, '/note/text'],
  [{ text: '   ', createdBy: 'alice' }, '/note/text'],
  [{ text: 'hello', createdBy: '' }, '/note/createdBy'],
  [{ text: 'x'.repeat(10_001), createdBy: 'alice' }, '/note/text'],
  [{ text: 'hello' }, '/note/createdBy'],
  [{ createdBy: 'alice' }, '/note/text'],
  [{ text: 'hello', createdBy: 7 }, '/note/createdBy'],
  ['just text', '/note'],
] as const) {
  test(`note ${JSON.stringify(note).slice(0, 60)} is 400 at ${path}, nothing written`, async () => {
    const t = await contactTenant(app());
    const email = randomEmail();
    await t.lead({ email, name: 'No Note' });
    const res = await t.lead({ email, name: 'Renamed', note });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'Validation Error');
    assert.deepEqual(
      res.body.details.map((d: { path: string }) => d.path),
      [path],
    );
    const profile = await t.profile({ email });
    assert.deepEqual(profile?.notes, []);
    assert.equal(profile?.name, 'No Note');
  });
}

test('a note of exactly 10,000 characters is accepted', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Long Note', note: { text: 'n'.repeat(10_000), createdBy: 'alice' } });
  assert.equal(res.status, 200);
  assert.equal((await t.profile({ email }))?.notes[0]?.text.length, 10_000);
});

test('tracker links the visitor id to the contact', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const tracker = uniq('visitor-');
  const res = await t.lead({ email, name: 'Tracked', tracker });
  assert.equal(res.body.tracker, tracker);
  assert.deepEqual((await t.profile({ email }))?.trackers, [tracker]);
});

test('a tracker linked to another contact moves to this one', async () => {
  const t = await contactTenant(app());
  const [first, second] = [randomEmail(), randomEmail()];
  const tracker = uniq('visitor-');
  await t.lead({ email: first, name: 'First Owner', tracker });
  await t.lead({ email: second, name: 'Second Owner', tracker });
  assert.deepEqual((await t.profile({ email: first }))?.trackers, []);
  assert.deepEqual((await t.profile({ email: second }))?.trackers, [tracker]);
});

test('a contact can carry several trackers', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const [v1, v2] = [uniq('v-'), uniq('v-')];
  await t.lead({ email, name: 'Two Devices', tracker: v1 });
  await t.lead({ email, tracker: v2 });
  assert.deepEqual(new Set((await t.profile({ email }))?.trackers), new Set([v1, v2]));
});
