import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FieldType } from '../../src/modules/definitions/definitions.service.js';
import { makeField, randomEmail } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();

interface TypeCases {
  /** A stored value, set first so the invalid and empty cases have something to keep or clear. */
  initial: unknown;
  valid: [sent: unknown, stored: unknown][];
  invalid: unknown[];
  empty: unknown[];
}

/** decisions.md, Contacts `fields`: per-type formats. */
const CASES: Record<FieldType, TypeCases> = {
  string: {
    initial: 'before',
    valid: [
      ['Hello world', 'Hello world'],
      ['  padded ', 'padded'],
      [42, '42'],
      [12.5, '12.5'],
      [true, 'true'],
    ],
    invalid: [{ a: 1 }, ['x']],
    empty: ['', null, [], '   '],
  },
  number: {
    initial: 1,
    valid: [
      [12.5, 12.5],
      ['12.5', 12.5],
      ['-3', -3],
      [0, 0],
      ['.5', 0.5],
    ],
    invalid: ['12,5', 'abc', true, '1e3', '12.', { n: 1 }],
    empty: ['', null, []],
  },
  date: {
    initial: '2020-01-01',
    valid: [
      ['2024-02-29', '2024-02-29'],
      ['29/02/2024', '2024-02-29'],
      ['01/12/1999', '1999-12-01'],
      [' 2025-07-04 ', '2025-07-04'],
    ],
    invalid: ['2023-02-29', '31/04/2024', '2024-13-01', '2024/02/01', '2024-2-1', '12/31/2024', 20240101, true],
    empty: ['', null, []],
  },
  boolean: {
    initial: true,
    valid: [
      [true, true],
      [false, false],
      ['true', true],
      ['false', false],
      ['FALSE', false],
    ],
    invalid: ['yes', 1, 0, 'on'],
    empty: ['', null, []],
  },
  location: {
    initial: 'Lyon',
    valid: [
      ['Paris', 'Paris'],
      [' São Paulo ', 'São Paulo'],
    ],
    invalid: [75, true, { city: 'Paris' }],
    empty: ['', null, []],
  },
  phone: {
    initial: '+33611111111',
    valid: [
      ['+33 6 12 34 56 78', '+33612345678'],
      ['+1 (415) 555-2671', '+14155552671'],
    ],
    invalid: ['12', 'call me', 33612345678],
    empty: ['', null, []],
  },
  array: {
    initial: ['a'],
    valid: [
      [
        [1, 'two', { three: 3 }],
        [1, 'two', { three: 3 }],
      ],
      [['x'], ['x']],
    ],
    invalid: ['a,b', 3, { 0: 'a' }],
    empty: [[], null, ''],
  },
};

async function withField(type: FieldType) {
  const t = await contactTenant(app());
  const name = `Fld ${type}`;
  await makeField(app().db, t.accountId, name, type);
  const email = randomEmail();
  const created = await t.lead({ email, name: 'Field Holder', fields: [{ key: name, value: CASES[type].initial }] });
  assert.equal(created.status, 200);
  assert.deepEqual(created.body.warnings, []);
  return { t, name, email };
}

for (const [type, cases] of Object.entries(CASES) as [FieldType, TypeCases][]) {
  test(`${type} field: valid values are stored in canonical form`, async () => {
    const { t, name, email } = await withField(type);
    for (const [sent, stored] of cases.valid) {
      const res = await t.lead({ email, fields: [{ key: name, value: sent }] });
      assert.equal(res.status, 200, `${JSON.stringify(sent)}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.warnings, [], JSON.stringify(sent));
      assert.deepEqual(res.body.fields, [{ key: name, value: stored }], JSON.stringify(sent));
      assert.deepEqual((await t.profile({ email }))?.fields, { [name]: stored }, JSON.stringify(sent));
    }
  });

  test(`${type} field: a value in the wrong format is skipped with a warning, the stored value stays`, async () => {
    const { t, name, email } = await withField(type);
    for (const sent of cases.invalid) {
      const res = await t.lead({ email, name: 'Renamed Anyway', fields: [{ key: name, value: sent }] });
      assert.equal(res.status, 200, JSON.stringify(sent));
      assert.equal(res.body.warnings.length, 1, JSON.stringify(sent));
      assert.equal(res.body.warnings[0].path, '/fields/0');
      assert.match(res.body.warnings[0].message, new RegExp(`^value of custom field '${name}' must be `));
      assert.deepEqual(res.body.fields, []);
      const profile = await t.profile({ email });
      assert.deepEqual(profile?.fields, { [name]: cases.initial }, JSON.stringify(sent));
      assert.equal(profile?.name, 'Renamed Anyway');
    }
  });

  test(`${type} field: an empty value clears the field`, async () => {
    const { t, name, email } = await withField(type);
    for (const sent of cases.empty) {
      await t.lead({ email, fields: [{ key: name, value: cases.initial }] });
      const res = await t.lead({ email, fields: [{ key: name, value: sent }] });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.warnings, []);
      assert.deepEqual(res.body.fields, [{ key: name, value: null }]);
      assert.deepEqual((await t.profile({ email }))?.fields, {}, JSON.stringify(sent));
    }
  });
}

test('field keys match the defined name ignoring case; profile shows the name as defined', async () => {
  const t = await contactTenant(app());
  await makeField(app().db, t.accountId, 'City', 'location');
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Case Keys', fields: [{ key: 'cITY', value: 'Paris' }] });
  assert.deepEqual(res.body.fields, [{ key: 'City', value: 'Paris' }]);
  assert.deepEqual((await t.profile({ email }))?.fields, { City: 'Paris' });
});

test('an unknown field key is skipped with a warning; the other fields are applied', async () => {
  const t = await contactTenant(app());
  await makeField(app().db, t.accountId, 'City', 'location');
  await makeField(app().db, t.accountId, 'Age', 'number');
  const email = randomEmail();
  const res = await t.lead({
    email,
    name: 'Partial Fields',
    fields: [
      { key: 'City', value: 'Nantes' },
      { key: 'Age', value: 'forty' },
      { key: 'cty', value: 'Paris' },
    ],
  });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.warnings, [
    { path: '/fields/1', message: "value of custom field 'Age' must be a number with a decimal point (e.g. 12.5)" },
    { path: '/fields/2', message: "unknown custom field 'cty'" },
  ]);
  assert.deepEqual((await t.profile({ email }))?.fields, { City: 'Nantes' });
});

test("another account's custom field of the same name is unknown here", async () => {
  const a = await contactTenant(app());
  const b = await contactTenant(app());
  await makeField(app().db, b.accountId, 'Secret', 'string');
  const email = randomEmail();
  const res = await a.lead({ email, name: 'No Secret', fields: [{ key: 'Secret', value: 'x' }] });
  assert.deepEqual(res.body.warnings, [{ path: '/fields/0', message: "unknown custom field 'Secret'" }]);
  assert.deepEqual((await a.profile({ email }))?.fields, {});
});

test('fields not sent keep their values', async () => {
  const t = await contactTenant(app());
  await makeField(app().db, t.accountId, 'City', 'location');
  await makeField(app().db, t.accountId, 'Plan', 'string');
  const email = randomEmail();
  await t.lead({
    email,
    name: 'Keeps',
    fields: [
      { key: 'City', value: 'Paris' },
      { key: 'Plan', value: 'gold' },
    ],
  });
  await t.lead({ email, fields: [{ key: 'Plan', value: 'silver' }] });
  assert.deepEqual((await t.profile({ email }))?.fields, { City: 'Paris', Plan: 'silver' });
});

test('the same field named twice in one call: the last entry wins', async () => {
  const t = await contactTenant(app());
  await makeField(app().db, t.accountId, 'Plan', 'string');
  const email = randomEmail();
  await t.lead({
    email,
    name: 'Twice',
    fields: [
      { key: 'Plan', value: 'first' },
      { key: 'plan', value: 'second' },
    ],
  });
  assert.deepEqual((await t.profile({ email }))?.fields, { Plan: 'second' });
});
