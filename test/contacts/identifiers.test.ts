import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomEmail, randomPhone, uniq } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();

test('email is trimmed and lowercased: another case finds the same contact', async () => {
  const t = await contactTenant(app());
  const local = uniq('MiXeD');
  const created = await t.lead({ email: ` ${local}@Example.COM `, name: 'Case Test' });
  assert.equal(created.body.email, `${local.toLowerCase()}@example.com`);
  const again = await t.lead({ email: `${local.toUpperCase()}@EXAMPLE.com` });
  assert.equal(again.body.id, created.body.id);
  assert.equal(again.body.created, false);
  assert.deepEqual((await t.profile({ id: created.body.id }))?.emails, [`${local.toLowerCase()}@example.com`]);
});

for (const email of ['not-an-email', 'a@b', 'two@@example.com', 'spaces in@example.com', '']) {
  test(`invalid email ${JSON.stringify(email)} is 400 Validation Error at /email, nothing created`, async () => {
    const t = await contactTenant(app());
    const phone = randomPhone();
    const res = await t.lead({ email, phone, name: 'Bad Email' });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'Validation Error');
    assert.deepEqual(
      res.body.details.map((d: { path: string }) => d.path),
      ['/email'],
    );
    assert.equal(await t.profile({ phone }), undefined);
  });
}

for (const [sent, stored] of [
  ['+33 6 12 34 56 78', '+33612345678'],
  ['+33.6.12.34.56.78', '+33612345678'],
  ['+1 (415) 555-2671', '+14155552671'],
  ['33612345678', '+33612345678'],
  ['[+44] 20-7946-0958', '+442079460958'],
] as const) {
  test(`phone ${JSON.stringify(sent)} is stored as ${stored}`, async () => {
    const t = await contactTenant(app());
    const res = await t.lead({ phone: sent, name: 'Phone Format' });
    assert.equal(res.status, 200);
    assert.equal(res.body.phone, stored);
    assert.deepEqual((await t.profile({ id: res.body.id }))?.phones, [stored]);
  });
}

test('a phone written differently finds the same contact', async () => {
  const t = await contactTenant(app());
  const created = await t.lead({ phone: '+33 6 98 76 54 32', name: 'Same Phone' });
  const again = await t.lead({ phone: '33698765432' });
  assert.equal(again.body.id, created.body.id);
  assert.equal(again.body.created, false);
});

for (const phone of ['12345', '+33 6 12', '+999 123 456 789', 'phone: +33612345678', '+33 6 12 34 56 78 ext 3', '06/12/34/56/78', '']) {
  test(`invalid phone ${JSON.stringify(phone)} is 400 Validation Error at /phone, nothing created`, async () => {
    const t = await contactTenant(app());
    const email = randomEmail();
    const res = await t.lead({ email, phone, name: 'Bad Phone' });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'Validation Error');
    assert.deepEqual(
      res.body.details.map((d: { path: string }) => d.path),
      ['/phone'],
    );
    assert.equal(await t.profile({ email }), undefined);
  });
}

test('409 when the email belongs to another contact than the id: nothing is written', async () => {
  const t = await contactTenant(app());
  const a = await t.lead({ email: randomEmail(), name: 'Contact A' });
  const bEmail = randomEmail();
  const b = await t.lead({ email: bEmail, name: 'Contact B' });
  const before = await t.profile({ id: a.body.id });
  const res = await t.lead({
    id: a.body.id,
    email: bEmail,
    name: 'Changed',
    tags: ['x'],
    phone: randomPhone(),
    kpis: {},
    metadata: { k: 1 },
  });
  assert.equal(res.status, 409);
  assert.equal(res.body.message, 'Identifier belongs to another contact');
  assert.deepEqual(await t.profile({ id: a.body.id }), before);
  assert.equal((await t.profile({ email: bEmail }))?.id, b.body.id);
});

test('409 when the phone belongs to another contact than the email: nothing is written', async () => {
  const t = await contactTenant(app());
  const aEmail = randomEmail();
  await t.lead({ email: aEmail, name: 'Contact A' });
  const bPhone = randomPhone();
  await t.lead({ phone: bPhone, name: 'Contact B' });
  const beforeA = await t.profile({ email: aEmail });
  const beforeB = await t.profile({ phone: bPhone });
  const res = await t.lead({ email: aEmail, phone: bPhone, name: 'Merged?', note: { text: 'n', createdBy: 'me' } });
  assert.equal(res.status, 409);
  assert.equal(res.body.message, 'Identifier belongs to another contact');
  assert.deepEqual(await t.profile({ email: aEmail }), beforeA);
  assert.deepEqual(await t.profile({ phone: bPhone }), beforeB);
});

test('409 when the id is unknown but email and phone belong to two different contacts', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const phone = randomPhone();
  await t.lead({ email, name: 'Has Email' });
  await t.lead({ phone, name: 'Has Phone' });
  const res = await t.lead({ id: 'ld_unknown', email, phone });
  assert.equal(res.status, 409);
  assert.deepEqual((await t.profile({ email }))?.phones, []);
});

test('sending identifiers that all belong to the same contact is not a conflict', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const phone = randomPhone();
  const created = await t.lead({ email, phone, name: 'All Mine' });
  const res = await t.lead({ id: created.body.id, email, phone, name: 'All Mine Again' });
  assert.equal(res.status, 200);
  assert.equal(res.body.id, created.body.id);
  const profile = await t.profile({ id: created.body.id });
  assert.deepEqual([profile?.emails, profile?.phones], [[email], [phone]]);
});
