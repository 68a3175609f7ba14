import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { findContactIdByLeadString } from '../../src/modules/contacts/lead-lookup.js';
import { makeField, makeKpi, randomEmail, randomPhone, uniq } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();

/** Account B with one fully populated contact, and account A's client. */
async function twoAccounts() {
  const a = await contactTenant(app());
  const b = await contactTenant(app());
  await makeKpi(app().db, b.accountId, 'visits');
  await makeKpi(app().db, a.accountId, 'visits');
  await makeField(app().db, b.accountId, 'City', 'location');
  const bEmail = randomEmail();
  const bPhone = randomPhone();
  const bTracker = uniq('visitor-');
  const bContact = await b.lead({
    email: bEmail,
    phone: bPhone,
    name: 'Belongs To B',
    tags: ['b-tag'],
    fields: [{ key: 'City', value: 'Berlin' }],
    kpis: { visits: 1 },
    metadata: { owner: 'b' },
    tracker: bTracker,
  });
  assert.equal(bContact.status, 200);
  const bBefore = await b.profile({ id: bContact.body.id });
  return { a, b, bId: bContact.body.id as string, bEmail, bPhone, bTracker, bBefore };
}

test("A's key sending B's contact id never touches B's contact: A gets a new contact of its own", async () => {
  const { a, b, bId, bBefore } = await twoAccounts();
  const aEmail = randomEmail();
  const res = await a.lead({
    id: bId,
    email: aEmail,
    name: 'Hijack Attempt',
    tags: ['a-tag'],
    kpis: { visits: 5 },
    metadata: { owner: 'a' },
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.created, true);
  assert.notEqual(res.body.id, bId);
  assert.deepEqual(await b.profile({ id: bId }), bBefore);
  assert.equal(await a.profile({ id: bId }), undefined);
  assert.equal((await a.profile({ email: aEmail }))?.id, res.body.id);
});

test("A's key sending only B's contact id (no address) is 400 and leaks nothing about B", async () => {
  const { a, b, bId, bBefore } = await twoAccounts();
  const res = await a.lead({ id: bId, name: 'Rename B' });
  assert.equal(res.status, 400);
  assert.deepEqual(
    res.body.details.map((d: { path: string }) => d.path),
    ['/email'],
  );
  assert.deepEqual(await b.profile({ id: bId }), bBefore);
});

test("A's key sending B's email creates A's own contact; B's stays unchanged", async () => {
  const { a, b, bId, bEmail, bPhone, bBefore } = await twoAccounts();
  const res = await a.lead({ email: bEmail, phone: bPhone, name: 'Same Person In A' });
  assert.equal(res.status, 200);
  assert.equal(res.body.created, true);
  assert.notEqual(res.body.id, bId);
  assert.deepEqual(await b.profile({ id: bId }), bBefore);
});

test("A's key linking B's tracker does not take it away from B's contact", async () => {
  const { a, b, bId, bTracker, bBefore } = await twoAccounts();
  const res = await a.lead({ email: randomEmail(), name: 'Tracker Thief', tracker: bTracker });
  assert.equal(res.status, 200);
  assert.deepEqual(await b.profile({ id: bId }), bBefore);
  assert.equal(await findContactIdByLeadString(app().db, b.accountId, bTracker), bId);
  assert.equal(await findContactIdByLeadString(app().db, a.accountId, bTracker), res.body.id);
});

test("B's contact cannot be read through A's account by id, email, phone or lead string", async () => {
  const { a, bId, bEmail, bPhone, bTracker } = await twoAccounts();
  assert.equal(await a.profile({ id: bId }), undefined);
  assert.equal(await a.profile({ email: bEmail }), undefined);
  assert.equal(await a.profile({ phone: bPhone }), undefined);
  for (const lead of [bId, bEmail, bPhone, bTracker]) {
    assert.equal(await findContactIdByLeadString(app().db, a.accountId, lead), undefined, lead);
  }
});

test("setContactFlags with A's account on B's contact is LEAD_NOT_FOUND and changes nothing", async () => {
  const { a, b, bId, bBefore } = await twoAccounts();
  await assert.rejects(
    setContactFlags(app().db, a.accountId, bId, { archived: true, optedOut: true }),
    (err: { code?: string }) => err.code === 'LEAD_NOT_FOUND',
  );
  assert.deepEqual(await b.profile({ id: bId }), bBefore);
});

test("B's custom fields and KPIs cannot be written through A's key", async () => {
  const { a, b, bId, bBefore } = await twoAccounts();
  const res = await a.lead({ email: randomEmail(), name: 'Field Writer', fields: [{ key: 'City', value: 'Paris' }] });
  assert.deepEqual(res.body.warnings, [{ path: '/fields/0', message: "unknown custom field 'City'" }]);
  assert.deepEqual(await b.profile({ id: bId }), bBefore);
});
