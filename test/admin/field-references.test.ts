import assert from 'node:assert/strict';
import { test } from 'node:test';
import { namesField, renameFieldIn } from '../../src/modules/segments/field-references.js';

/** docs/decisions.md, Editing and deleting: how a field rename or delete finds the segments naming the field. */

test('a field named in criteria is found ignoring case, also in a nested list of criteria', () => {
  assert.equal(namesField({ fields: [{ name: 'City', value: 'Paris' }] }, 'city'), true);
  assert.equal(namesField({ any: [{ tags: ['vip'] }, { fields: [{ name: 'CITY', value: 'Lyon' }] }] }, 'city'), true);
  assert.equal(namesField({ fields: [{ name: 'Town', value: 'City' }], tags: ['city'] }, 'city'), false, 'values and tags are not names');
  assert.equal(namesField({ event: { type: 'city', withinDays: 3 } }, 'city'), false);
});

test('a rename rewrites every reference and nothing else; undefined when the criteria do not name the field', () => {
  const criteria = {
    tags: ['city'],
    fields: [
      { name: 'city', value: 'City' },
      { name: 'Age', value: 3 },
    ],
    any: [{ fields: [{ name: 'CITY', value: 'x' }] }],
  };
  assert.deepEqual(renameFieldIn(criteria, 'city', 'Town'), {
    tags: ['city'],
    fields: [
      { name: 'Town', value: 'City' },
      { name: 'Age', value: 3 },
    ],
    any: [{ fields: [{ name: 'Town', value: 'x' }] }],
  });
  assert.equal(criteria.fields[0]!.name, 'city', 'the input is not changed');
  assert.equal(renameFieldIn({ fields: [{ name: 'Age', value: 3 }] }, 'city', 'Town'), undefined);
});
