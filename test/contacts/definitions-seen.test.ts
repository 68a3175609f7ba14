import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_DEFINITION_NAME } from '../../src/contract/constants.js';
import { definitionRows, definitionsLastSeen, rememberDefinitions } from '../../src/modules/contacts/definitions-seen.js';
import { deleteField, deleteKpi, renameField } from '../../src/modules/definitions/definitions.service.js';
import { makeField, makeKpi, randomEmail } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

/**
 * A lead write naming custom fields or KPIs decides on their definitions as the process last
 * read them, and on PostgreSQL writes in the same statement as its read only if the read finds
 * them unchanged (definitions-seen.ts, contact-write-first.ts). Each test changes a definition
 * between two writes naming it: the second must answer and store what a fresh read decides,
 * never what the remembered definition would have. Both engines: the answers are the spec's.
 */
const app = useTestApp();

/** A tenant and a contact, with a first write naming `body`'s definitions (which the process then remembers). */
async function remembered(body: Record<string, unknown>) {
  const t = await contactTenant(app());
  const email = randomEmail();
  const write = (extra: Record<string, unknown>) => t.lead({ email, ...extra });
  return { t, email, write, setUp: async () => assert.equal((await write({ name: 'Ada', ...body })).status, 200) };
}

test('a field renamed since the last write: its old name is unknown, the new one is echoed', async () => {
  const c = await remembered({ fields: [{ key: 'City', value: 'Paris' }] });
  const field = await makeField(app().db, c.t.accountId, 'City', 'string');
  await c.setUp();
  await renameField(app().db, c.t.accountId, field.id, { name: 'Town' });
  const old = await c.write({ fields: [{ key: 'City', value: 'Lyon' }] });
  assert.equal(old.status, 200, JSON.stringify(old.body));
  assert.deepEqual(old.body.warnings, [{ path: '/fields/0', message: "unknown custom field 'City'" }]);
  assert.deepEqual(old.body.fields, []);
  assert.deepEqual((await c.t.profile({ email: c.email }))?.fields, { Town: 'Paris' });
  // Renamed in case only: the same key, the name the answer echoes changes.
  await c.write({ fields: [{ key: 'town', value: 'Nantes' }] });
  await renameField(app().db, c.t.accountId, field.id, { name: 'TOWN' });
  const renamed = await c.write({ fields: [{ key: 'town', value: 'Lille' }] });
  assert.deepEqual(renamed.body.fields, [{ key: 'TOWN', value: 'Lille' }]);
  assert.deepEqual(renamed.body.warnings, []);
});

test('a field deleted and created again with another type: the value is checked against the new type', async () => {
  const c = await remembered({ fields: [{ key: 'Size', value: 'large' }] });
  const field = await makeField(app().db, c.t.accountId, 'Size', 'string');
  await c.setUp();
  await deleteField(app().db, c.t.accountId, field.id);
  await makeField(app().db, c.t.accountId, 'Size', 'number');
  const res = await c.write({ fields: [{ key: 'Size', value: 'small' }] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.warnings, [
    { path: '/fields/0', message: "value of custom field 'Size' must be a number with a decimal point (e.g. 12.5)" },
  ]);
  assert.deepEqual((await c.t.profile({ email: c.email }))?.fields, {});
  const number = await c.write({ fields: [{ key: 'Size', value: 42 }] });
  assert.deepEqual(number.body.fields, [{ key: 'Size', value: 42 }]);
  assert.deepEqual((await c.t.profile({ email: c.email }))?.fields, { Size: 42 });
});

test('a field created after a write that named it unknown is set by the next write', async () => {
  const c = await remembered({ fields: [{ key: 'Country', value: 'FR' }] });
  await c.setUp();
  await makeField(app().db, c.t.accountId, 'Country', 'string');
  const res = await c.write({ fields: [{ key: 'Country', value: 'FR' }] });
  assert.deepEqual(res.body.warnings, []);
  assert.deepEqual((await c.t.profile({ email: c.email }))?.fields, { Country: 'FR' });
});

test('a KPI created after a write that named it unknown is added; deleted, it is unknown again', async () => {
  const c = await remembered({ kpis: { ltv: 5 } });
  await c.setUp();
  const kpi = await makeKpi(app().db, c.t.accountId, 'ltv');
  const added = await c.write({ kpis: { ltv: 7 } });
  assert.deepEqual(added.body.kpis, { ltv: 7 });
  assert.deepEqual(added.body.warnings, []);
  await deleteKpi(app().db, c.t.accountId, kpi.id);
  const gone = await c.write({ kpis: { ltv: 1 } });
  assert.deepEqual(gone.body.warnings, [{ path: '/kpis/ltv', message: "unknown KPI 'ltv'" }]);
  assert.deepEqual((await c.t.profile({ email: c.email }))?.kpis, {});
});

test('a new contact named with remembered definitions is created with its values', async () => {
  const t = await contactTenant(app());
  await makeField(app().db, t.accountId, 'City', 'string');
  await makeKpi(app().db, t.accountId, 'orders');
  const body = { name: 'Ada', fields: [{ key: 'City', value: 'Paris' }], kpis: { orders: 1, unknown: 2 } };
  for (let i = 0; i < 2; i++) {
    const email = randomEmail();
    const res = await t.lead({ email, ...body });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.created, true);
    assert.deepEqual(res.body.kpis, { orders: 1 });
    assert.deepEqual(res.body.warnings, [{ path: '/kpis/unknown', message: "unknown KPI 'unknown'" }]);
    const profile = await t.profile({ email });
    assert.deepEqual(profile?.fields, { City: 'Paris' });
    assert.deepEqual(profile?.kpis, { orders: 1 });
  }
});

test('a key longer than any definition can be is never remembered (the memory held stays bounded)', () => {
  const accountId = `acc_bound_${randomEmail()}`;
  const longest = 'k'.repeat(MAX_DEFINITION_NAME);
  const tooLong = 'k'.repeat(MAX_DEFINITION_NAME + 1);
  rememberDefinitions(accountId, [tooLong], [longest, tooLong], { fields: [], kpiIds: [] });
  assert.deepEqual(definitionsLastSeen(accountId, [], [longest]), { fields: [], kpiIds: [] });
  assert.equal(definitionsLastSeen(accountId, [], [tooLong]), undefined);
  assert.equal(definitionsLastSeen(accountId, [tooLong], []), undefined);
});

test("the definitions' order is PostgreSQL's collate \"C\" (UTF-8 bytes), not JavaScript's code units", () => {
  // U+FFFD is EF BF BD in UTF-8, before the F0 of an astral character; as UTF-16 it sorts after its D83D.
  const rows = JSON.parse(definitionRows({ fields: [], kpiIds: ['a\u{1F600}', 'a\uFFFD', 'B', 'a'] })) as string[][];
  assert.deepEqual(
    rows.map((row) => row[1]),
    ['B', 'a', 'a\uFFFD', 'a\u{1F600}'],
  );
});

test('a remembered KPI whose total would leave its range is not added, with the warning (decisions.md, Limits)', async () => {
  const c = await remembered({ kpis: { score: 999999999 } });
  await makeKpi(app().db, c.t.accountId, 'score');
  await c.setUp();
  // Decided on the remembered KPI, written (or not) by the one statement on PostgreSQL.
  const res = await c.write({ kpis: { score: 1 } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.kpis, {});
  assert.deepEqual(res.body.warnings, [
    { path: '/kpis/score', message: "KPI 'score' not added: its total would leave -999999999.999999 to 999999999.999999" },
  ]);
  assert.deepEqual((await c.t.profile({ email: c.email }))?.kpis, { score: 999999999 });
});
