import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prepareContactWrite } from '../../src/modules/contacts/contact-write.js';

/**
 * The decisions a lead write takes before its read (contact-write.ts; used by the one-statement
 * writes on PostgreSQL). A lead the rules would refuse to create (no name, the usual update)
 * decides no create and throws nothing: the refusal is the read's to make, when the read finds
 * nobody (test/contacts/errors.test.ts pins that 400). Building an error only to drop it cost a
 * stack trace per request, a quarter of the API's CPU on the harness's update line.
 */
const now = Date.now();

test('a lead without a name decides no create before the read, and does not throw', () => {
  const prepared = prepareContactWrite({ email: 'ada@example.com', tags: ['vip'] });
  assert.equal(prepared.decideIfNobody(now), undefined);
  // The update of a contact found is still decided first: the lead names one identifier.
  assert.equal(prepared.decideIfFound(now)?.plan.contact.kind, 'update');
});

test('a lead with a name and an address decides its create before the read', () => {
  const decided = prepareContactWrite({ email: 'ada@example.com', name: 'Ada Lovelace' }).decideIfNobody(now);
  assert.ok(decided?.plan.contact.kind === 'insert');
  assert.equal(decided.plan.contact.name, 'Ada Lovelace');
});

test('a lead naming a custom field decides no create before the read without the definitions it assumes (its rules need them)', () => {
  const prepared = prepareContactWrite({ email: 'ada@example.com', name: 'Ada Lovelace', fields: [{ key: 'City', value: 'Paris' }] });
  assert.equal(prepared.decideIfNobody(now), undefined);
});

test('the read still refuses a create without a name', () => {
  const prepared = prepareContactWrite({ email: 'ada@example.com' });
  assert.throws(
    () => prepared.decide({ owners: {}, fields: [], kpiIds: [] }, now),
    (err: { code?: string; details?: { path: string }[] }) => err.code === 'VALIDATION' && err.details?.[0]?.path === '/name',
  );
});
