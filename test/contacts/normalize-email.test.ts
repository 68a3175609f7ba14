import assert from 'node:assert/strict';
import { test } from 'node:test';
import validator from 'validator';
import { normalizeEmail } from '../../src/modules/contacts/normalize.js';

// normalizeEmail keeps the validator's verdicts (normalize.ts): asked again, or after the cache
// was emptied by 10,000 other addresses, it must still answer exactly as the validator does.
const cases = [
  ' Ada@Example.COM ',
  'ada@example.com',
  'not-an-email',
  'a@b',
  'two@@example.com',
  'x@y.co',
  `${'a'.repeat(65)}@example.com`,
];
const expected = (raw: string) => {
  const email = raw.trim().toLowerCase();
  return validator.isEmail(email) ? email : undefined;
};

test('normalizeEmail answers as the validator, first time, again, and after its cache was emptied', () => {
  for (const raw of cases) assert.equal(normalizeEmail(raw), expected(raw), raw);
  for (const raw of cases) assert.equal(normalizeEmail(raw), expected(raw), `${raw} again`);
  for (let i = 0; i < 10_050; i++) assert.equal(normalizeEmail(`filler${i}@example.com`), `filler${i}@example.com`);
  for (const raw of cases) assert.equal(normalizeEmail(raw), expected(raw), `${raw} after the cache was emptied`);
});

test('an address longer than the validator takes (254) is refused, every time', () => {
  const long = `${'a'.repeat(60)}@${'b'.repeat(200)}.com`;
  assert.equal(normalizeEmail(long), undefined);
  assert.equal(normalizeEmail(long), undefined);
});
