import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inTransaction } from '../../src/db/transaction.js';
import { getContactProfile, setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { findContactIdByLeadString } from '../../src/modules/contacts/lead-lookup.js';
import { makeField, makeKpi, randomEmail, uniq } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();
const find = (accountId: string, lead: string) => findContactIdByLeadString(app().db, accountId, lead);

test('a lead string containing @ is read as an email, trimmed and in any case', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const { body } = await t.lead({ email, name: 'By Email' });
  assert.equal(await find(t.accountId, email), body.id);
  assert.equal(await find(t.accountId, ` ${email.toUpperCase()} `), body.id);
  assert.equal(await find(t.accountId, 'nobody@example.com'), undefined);
});

test('a lead string starting with + is read as a phone, separators allowed', async () => {
  const t = await contactTenant(app());
  const { body } = await t.lead({ phone: '+33 6 55 44 33 22', name: 'By Phone' });
  assert.equal(await find(t.accountId, '+33655443322'), body.id);
  assert.equal(await find(t.accountId, '+33 6 55 44 33 22'), body.id);
  assert.equal(await find(t.accountId, '+33 6 00 00 00 00'), undefined);
  assert.equal(await find(t.accountId, '+12'), undefined);
});

test('a lead string of 7 or more digits only is read as a phone with country code', async () => {
  const t = await contactTenant(app());
  const { body } = await t.lead({ phone: '+33655443311', name: 'Digits Only' });
  assert.equal(await find(t.accountId, '33655443311'), body.id);
  // A `+` sent unencoded in a GET query string arrives as a space.
  assert.equal(await find(t.accountId, ' 33655443311'), body.id);
});

test('fewer than 7 digits is not a phone: read as a contact id, then a visitor id', async () => {
  const t = await contactTenant(app());
  const { body } = await t.lead({ email: randomEmail(), name: 'Short Tracker', tracker: '123456' });
  assert.equal(await find(t.accountId, '123456'), body.id);
});

test('7 or more digits is a phone even when a visitor id has those digits', async () => {
  const t = await contactTenant(app());
  await t.lead({ email: randomEmail(), name: 'Digit Tracker', tracker: '1234567' });
  assert.equal(await find(t.accountId, '1234567'), undefined);
});

test('anything else is a contact id first, then a visitor id', async () => {
  const t = await contactTenant(app());
  const tracker = uniq('visitor-');
  const { body } = await t.lead({ email: randomEmail(), name: 'By Id', tracker });
  assert.equal(await find(t.accountId, body.id), body.id);
  assert.equal(await find(t.accountId, tracker), body.id);
  assert.equal(await find(t.accountId, 'ld_unknown'), undefined);
  assert.equal(await find(t.accountId, ''), undefined);
});

test('a contact id wins over a visitor id with the same text', async () => {
  const t = await contactTenant(app());
  const owner = await t.lead({ email: randomEmail(), name: 'Id Owner' });
  // Another contact carries a tracker whose text is the first contact's id.
  await t.lead({ email: randomEmail(), name: 'Tracker Owner', tracker: owner.body.id });
  assert.equal(await find(t.accountId, owner.body.id), owner.body.id);
});

test('findContactIdByLeadString works inside a transaction', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const { body } = await t.lead({ email, name: 'In Tx' });
  const found = await inTransaction(app().db, (tx) => findContactIdByLeadString(tx, t.accountId, email));
  assert.equal(found, body.id);
});

test('getContactProfile returns the contact show shape of interfaces.md', async () => {
  const t = await contactTenant(app());
  await makeField(app().db, t.accountId, 'Birth Date', 'date');
  await makeKpi(app().db, t.accountId, 'orders');
  const email = randomEmail();
  const tracker = uniq('v-');
  const { body } = await t.lead({
    email,
    phone: '+33 6 11 22 33 44',
    name: 'Full Profile',
    tags: ['b', 'a'],
    fields: [{ key: 'birth date', value: '01/02/1990' }],
    kpis: { orders: 2 },
    metadata: { source: 'web' },
    note: { text: 'hello', createdBy: 'ops' },
    tracker,
  });
  const profile = await getContactProfile(app().db, t.accountId, { email });
  assert.ok(profile);
  const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
  assert.match(profile.createdAt, isoMs);
  assert.match(profile.updatedAt, isoMs);
  assert.match(profile.notes[0]!.createdAt, isoMs);
  assert.deepEqual(profile, {
    id: body.id,
    name: 'Full Profile',
    emails: [email],
    phones: ['+33611223344'],
    tags: ['a', 'b'],
    fields: { 'Birth Date': '1990-02-01' },
    kpis: { orders: 2 },
    metadata: { source: 'web' },
    notes: [{ text: 'hello', createdBy: 'ops', createdAt: profile.notes[0]!.createdAt }],
    trackers: [tracker],
    archived: false,
    optedOut: false,
    createdAt: profile.createdAt,
    updatedAt: profile.updatedAt,
  });
  assert.deepEqual(await getContactProfile(app().db, t.accountId, { phone: '+33611223344' }), profile);
  assert.deepEqual(await getContactProfile(app().db, t.accountId, { id: body.id }), profile);
  assert.equal(await getContactProfile(app().db, t.accountId, { id: 'ld_nope' }), undefined);
  assert.equal(await getContactProfile(app().db, t.accountId, {}), undefined);
});

test('setContactFlags archives, opts out and back; unknown id is LEAD_NOT_FOUND', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const { body } = await t.lead({ email, name: 'Flags' });
  await setContactFlags(app().db, t.accountId, body.id, { archived: true, optedOut: true });
  let profile = await t.profile({ email });
  assert.deepEqual([profile?.archived, profile?.optedOut], [true, true]);
  await setContactFlags(app().db, t.accountId, body.id, { optedOut: false });
  profile = await t.profile({ email });
  assert.deepEqual([profile?.archived, profile?.optedOut], [true, false]);
  await setContactFlags(app().db, t.accountId, body.id, {});
  await assert.rejects(
    setContactFlags(app().db, t.accountId, 'ld_nope', { archived: false }),
    (err: { code?: string }) => err.code === 'LEAD_NOT_FOUND',
  );
  await assert.rejects(setContactFlags(app().db, t.accountId, 'ld_nope', {}), (err: { code?: string }) => err.code === 'LEAD_NOT_FOUND');
});
