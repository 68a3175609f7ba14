import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeKpi, randomEmail, randomPhone, uniq } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

const app = useTestApp();

test('50 concurrent KPI increments on one contact all count', async () => {
  const t = await contactTenant(app());
  await makeKpi(app().db, t.accountId, 'clicks');
  const email = randomEmail();
  await t.lead({ email, name: 'Busy Contact', kpis: { clicks: 0 } });
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => t.lead({ email, kpis: { clicks: i % 2 === 0 ? 1 : '2' } })));
  assert.deepEqual(
    results.map((r) => r.status),
    Array(50).fill(200),
  );
  assert.deepEqual((await t.profile({ email }))?.kpis, { clicks: 25 * 1 + 25 * 2 });
});

test('50 concurrent first increments (no stored KPI row yet) all count', async () => {
  const t = await contactTenant(app());
  await makeKpi(app().db, t.accountId, 'views');
  const email = randomEmail();
  await t.lead({ email, name: 'Fresh Counter' });
  const results = await Promise.all(Array.from({ length: 50 }, () => t.lead({ email, kpis: { views: 0.5 } })));
  assert.ok(results.every((r) => r.status === 200));
  assert.deepEqual((await t.profile({ email }))?.kpis, { views: 25 });
});

test('20 concurrent creates with the same new email make exactly one contact', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => t.lead({ email, name: `Racer ${i}`, tags: [`racer-${i}`] })));
  assert.deepEqual(
    results.map((r) => r.status),
    Array(20).fill(200),
    JSON.stringify(results.find((r) => r.status !== 200)?.body),
  );
  const ids = new Set(results.map((r) => r.body.id));
  assert.equal(ids.size, 1);
  assert.equal(results.filter((r) => r.body.created === true).length, 1);
  const profile = await t.profile({ email });
  assert.equal(profile?.id, [...ids][0]);
  assert.deepEqual(profile?.emails, [email]);
  // Every racer's write landed on the one contact.
  assert.equal(profile?.tags.length, 20);
});

test('20 concurrent creates with the same new phone make exactly one contact', async () => {
  const t = await contactTenant(app());
  const phone = randomPhone();
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => t.lead({ phone, name: `Caller ${i}` })));
  assert.ok(results.every((r) => r.status === 200));
  assert.equal(new Set(results.map((r) => r.body.id)).size, 1);
  assert.equal(results.filter((r) => r.body.created === true).length, 1);
});

test('concurrent metadata merges on one contact keep every key', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  await t.lead({ email, name: 'Merged Often' });
  const keys = Array.from({ length: 20 }, () => uniq('k'));
  const results = await Promise.all(keys.map((key) => t.lead({ email, metadata: { [key]: true } })));
  assert.ok(results.every((r) => r.status === 200));
  const metadata = (await t.profile({ email }))?.metadata ?? {};
  assert.deepEqual(Object.keys(metadata).sort(), [...keys].sort());
});

test('concurrent writes adding different emails to one contact give each its own position', async () => {
  const t = await contactTenant(app());
  const first = randomEmail();
  const created = await t.lead({ email: first, name: 'Many Emails' });
  const extra = Array.from({ length: 10 }, () => randomEmail());
  const results = await Promise.all(extra.map((email) => t.lead({ id: created.body.id, email })));
  assert.ok(results.every((r) => r.status === 200));
  const emails = (await t.profile({ id: created.body.id }))?.emails ?? [];
  assert.equal(emails[0], first);
  assert.deepEqual(new Set(emails), new Set([first, ...extra]));
});
