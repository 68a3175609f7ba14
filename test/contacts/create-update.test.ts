import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { randomEmail, randomPhone } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();

test('a write with an unknown email creates the contact and answers 200 with a new ld_ id', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Ada Lovelace' });
  assert.equal(res.status, 200);
  assert.match(res.body.id, /^ld_[0-9a-z]+$/);
  assert.equal(res.body.created, true);
  const profile = await t.profile({ id: res.body.id });
  assert.equal(profile?.name, 'Ada Lovelace');
  assert.deepEqual(profile?.emails, [email]);
  assert.equal(profile?.archived, false);
  assert.equal(profile?.optedOut, false);
});

test('the response repeats what was sent, in stored form, and always carries warnings', async () => {
  const t = await contactTenant(app());
  const res = await t.lead({
    email: '  Grace.Hopper@Example.COM ',
    phone: '+33 6 12-34.56 78',
    name: '  Grace Hopper ',
    tags: ['Été  Client'],
    metadata: { plan: 'gold' },
    note: { text: ' called ', createdBy: ' sales ' },
    tracker: 'visitor-1',
  });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    id: res.body.id,
    created: true,
    email: 'grace.hopper@example.com',
    phone: '+33612345678',
    name: 'Grace Hopper',
    tags: ['ete-client'],
    metadata: { plan: 'gold' },
    note: { text: 'called', createdBy: 'sales' },
    tracker: 'visitor-1',
    warnings: [],
  });
});

test('a second write with the same email updates the same contact (created false)', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const first = await t.lead({ email, name: 'First Name' });
  const second = await t.lead({ email, name: 'Second Name' });
  assert.equal(second.status, 200);
  assert.equal(second.body.id, first.body.id);
  assert.equal(second.body.created, false);
  const profile = await t.profile({ email });
  assert.equal(profile?.name, 'Second Name');
});

test('an update without a name keeps the stored name', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Kept Name' });
  const res = await t.lead({ email, tags: ['x'] });
  assert.equal(res.status, 200);
  assert.equal((await t.profile({ email }))?.name, 'Kept Name');
});

test('lookup by id updates that contact and adds a new email to it', async () => {
  const t = await contactTenant(app());
  const first = randomEmail();
  const created = await t.lead({ email: first, name: 'By Id' });
  const added = randomEmail();
  const res = await t.lead({ id: created.body.id, email: added });
  assert.equal(res.status, 200);
  assert.equal(res.body.id, created.body.id);
  assert.equal(res.body.created, false);
  assert.deepEqual((await t.profile({ id: created.body.id }))?.emails, [first, added]);
});

test('lookup by phone alone finds the contact', async () => {
  const t = await contactTenant(app());
  const phone = randomPhone();
  const created = await t.lead({ phone, name: 'Phone Only' });
  const res = await t.lead({ phone, name: 'Phone Renamed' });
  assert.equal(res.body.id, created.body.id);
  assert.equal(res.body.created, false);
  assert.equal((await t.profile({ phone }))?.name, 'Phone Renamed');
});

test('email is looked up before phone: a new phone is added to the contact the email names', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const phone = randomPhone();
  const created = await t.lead({ email, name: 'Email First' });
  const res = await t.lead({ email, phone });
  assert.equal(res.body.id, created.body.id);
  assert.deepEqual((await t.profile({ id: created.body.id }))?.phones, [phone]);
});

test('an id that matches nothing is not an error: the lookup goes on with the email', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const created = await t.lead({ email, name: 'Found By Email' });
  const res = await t.lead({ id: 'ld_doesnotexist', email, name: 'Renamed' });
  assert.equal(res.status, 200);
  assert.equal(res.body.id, created.body.id);
  assert.equal(res.body.created, false);
  assert.equal((await t.profile({ email }))?.name, 'Renamed');
});

test('an id that matches nothing creates a contact with a new id, never the sent one', async () => {
  const t = await contactTenant(app());
  const res = await t.lead({ id: 'ld_mychoice', email: randomEmail(), name: 'New One' });
  assert.equal(res.status, 200);
  assert.equal(res.body.created, true);
  assert.notEqual(res.body.id, 'ld_mychoice');
  assert.equal(await t.profile({ id: 'ld_mychoice' }), undefined);
  assert.equal((await t.profile({ id: res.body.id }))?.name, 'New One');
});

test('a contact holds several emails and phones; the first stored stays primary (listed first)', async () => {
  const t = await contactTenant(app());
  const [e1, e2, e3] = [randomEmail(), randomEmail(), randomEmail()];
  const [p1, p2] = [randomPhone(), randomPhone()];
  const created = await t.lead({ email: e1, phone: p1, name: 'Many Addresses' });
  await t.lead({ email: e1, phone: p2 });
  await t.lead({ phone: p2, email: e2 });
  await t.lead({ id: created.body.id, email: e3 });
  await t.lead({ email: e2 }); // already there: no duplicate, order kept
  const profile = await t.profile({ id: created.body.id });
  assert.deepEqual(profile?.emails, [e1, e2, e3]);
  assert.deepEqual(profile?.phones, [p1, p2]);
});

test('the same email in two accounts makes two separate contacts', async () => {
  const a = await contactTenant(app());
  const b = await contactTenant(app());
  const email = randomEmail();
  const inA = await a.lead({ email, name: 'In A' });
  const inB = await b.lead({ email, name: 'In B' });
  assert.equal(inB.body.created, true);
  assert.notEqual(inA.body.id, inB.body.id);
  assert.equal((await a.profile({ email }))?.name, 'In A');
  assert.equal((await b.profile({ email }))?.name, 'In B');
});

test('a write to an archived contact returns it to the list', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const created = await t.lead({ email, name: 'Archived Once' });
  await setContactFlags(app().db, t.accountId, created.body.id, { archived: true });
  assert.equal((await t.profile({ email }))?.archived, true);
  const res = await t.lead({ email, tags: ['back'] });
  assert.equal(res.status, 200);
  const profile = await t.profile({ email });
  assert.equal(profile?.archived, false);
  assert.deepEqual(profile?.tags, ['back']);
});

test('a write does not change the opted-out flag', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const created = await t.lead({ email, name: 'Opted Out' });
  await setContactFlags(app().db, t.accountId, created.body.id, { optedOut: true });
  await t.lead({ email, name: 'Still Opted Out' });
  assert.equal((await t.profile({ email }))?.optedOut, true);
});

test('an update moves updatedAt forward and keeps createdAt', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Timestamps' });
  const before = await t.profile({ email });
  await new Promise((resolve) => setTimeout(resolve, 5));
  await t.lead({ email, name: 'Timestamps Two' });
  const after = await t.profile({ email });
  assert.equal(after?.createdAt, before?.createdAt);
  assert.ok(after!.updatedAt > before!.updatedAt);
  assert.match(after!.updatedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});
