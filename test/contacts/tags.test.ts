import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomEmail } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();

test('tags are stored lowercase, without accents, white space runs as one hyphen, trimmed', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Tagged', tags: ['  Black   Friday ', 'Été Client', 'ÇA\tVA', 'Crème brûlée', 'VIP'] });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.tags, ['black-friday', 'ete-client', 'ca-va', 'creme-brulee', 'vip']);
  assert.deepEqual((await t.profile({ email }))?.tags, ['black-friday', 'ca-va', 'creme-brulee', 'ete-client', 'vip']);
});

test('empty tags are dropped and duplicates (after normalisation) stored once', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Dupes', tags: ['', '   ', 'Promo', 'promo', ' PROMO ', 'Prómo'] });
  assert.deepEqual(res.body.tags, ['promo']);
  assert.deepEqual((await t.profile({ email }))?.tags, ['promo']);
});

test('tags are added to the ones already stored', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Accumulate', tags: ['first'] });
  await t.lead({ email, tags: ['second', 'first'] });
  assert.deepEqual((await t.profile({ email }))?.tags, ['first', 'second']);
});

test('tagsRemove is compared in stored form: "Black Friday" removes black-friday', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Remover', tags: ['Black Friday', 'Été', 'keep'] });
  const res = await t.lead({ email, tagsRemove: ['Black Friday', 'ETE', 'not-there'] });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.tagsRemove, ['black-friday', 'ete', 'not-there']);
  assert.deepEqual((await t.profile({ email }))?.tags, ['keep']);
});

test('a tag both added and removed in one call ends up removed', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Both Ways', tags: ['old'] });
  const res = await t.lead({ email, tags: ['New', 'Old', 'kept'], tagsRemove: ['new', 'old'] });
  assert.deepEqual(res.body.tags, ['kept']);
  assert.deepEqual((await t.profile({ email }))?.tags, ['kept']);
});

test('a tag added and removed when creating is not stored', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'New Both', tags: ['a', 'b'], tagsRemove: ['B'] });
  assert.deepEqual((await t.profile({ email }))?.tags, ['a']);
});

test('tags belong to one contact: another contact of the account keeps its own', async () => {
  const t = await contactTenant(app());
  const [e1, e2] = [randomEmail(), randomEmail()];
  await t.lead({ email: e1, name: 'One', tags: ['shared', 'one'] });
  await t.lead({ email: e2, name: 'Two', tags: ['shared'] });
  await t.lead({ email: e2, tagsRemove: ['shared'] });
  assert.deepEqual((await t.profile({ email: e1 }))?.tags, ['one', 'shared']);
  assert.deepEqual((await t.profile({ email: e2 }))?.tags, []);
});

test('a tag longer than 255 characters in stored form is 400 at /tags/<index>, nothing written', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Long Tag', tags: ['fine', 'x'.repeat(256)] });
  assert.equal(res.status, 400);
  assert.deepEqual(res.body.details, [{ path: '/tags/1', message: 'must be at most 255 characters' }]);
  assert.equal(await t.profile({ email }), undefined);
});

test('a tag of exactly 255 characters is accepted', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const res = await t.lead({ email, name: 'Max Tag', tags: ['Y'.repeat(255)] });
  assert.equal(res.status, 200);
  assert.deepEqual((await t.profile({ email }))?.tags, ['y'.repeat(255)]);
});
