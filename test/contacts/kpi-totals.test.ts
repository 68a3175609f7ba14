import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { makeKpi, randomEmail } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

/** decisions.md (Limits): KPI totals are exact to 6 decimal places within ±999,999,999.999999. */
const app = useTestApp();

const RANGE = '-999999999.999999 to 999999999.999999';

async function kpiContact(kpiId: string, start: unknown) {
  const t = await contactTenant(app());
  await makeKpi(app().db, t.accountId, kpiId);
  const email = randomEmail();
  const first = await t.lead({ email, name: 'Counter', kpis: { [kpiId]: start } });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const total = async () => (await t.profile({ email }))?.kpis[kpiId];
  return { t, email, total, add: (value: unknown) => t.lead({ email, kpis: { [kpiId]: value } }) };
}

test('decimal increments add up exactly: 200 times 0.1 is 20', async () => {
  const c = await kpiContact('points', 0.1);
  // Through the service: 200 requests at once would meet the key's rate limit.
  for (let i = 1; i < 200; i++) await writeContact(app().db, c.t.accountId, { email: c.email, kpis: { points: 0.1 } });
  assert.equal(await c.total(), 20);
  await c.add('-19.7');
  assert.equal(await c.total(), 0.3);
});

test('1.7e308 is out of range: skipped with a warning, twice, never a 500 or an infinite total', async () => {
  const c = await kpiContact('score', 5);
  for (let i = 0; i < 2; i++) {
    const res = await c.add(1.7e308);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.kpis, {});
    assert.deepEqual(res.body.warnings, [{ path: '/kpis/score', message: `value of KPI 'score' must be within ${RANGE}` }]);
  }
  const negative = await c.add('-1000000000');
  assert.deepEqual(negative.body.warnings, [{ path: '/kpis/score', message: `value of KPI 'score' must be within ${RANGE}` }]);
  assert.equal(await c.total(), 5);
});

test('an increment that would take the total out of range is skipped with a warning; the others apply', async () => {
  const t = await contactTenant(app());
  await makeKpi(app().db, t.accountId, 'big');
  await makeKpi(app().db, t.accountId, 'small');
  const email = randomEmail();
  await t.lead({ email, name: 'Near The Edge', kpis: { big: 999999999.999998, small: -999999999.999999 } });
  const res = await t.lead({ email, kpis: { big: 0.000002, small: 1 } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.kpis, { small: 1 });
  assert.deepEqual(res.body.warnings, [{ path: '/kpis/big', message: `KPI 'big' not added: its total would leave ${RANGE}` }]);
  assert.deepEqual((await t.profile({ email }))?.kpis, { big: 999999999.999998, small: -999999998.999999 });
  await t.lead({ email, kpis: { big: '0.000001' } });
  assert.deepEqual((await t.profile({ email }))?.kpis, { big: 999999999.999999, small: -999999998.999999 });
});

test('increments are read from their decimal text and rounded half away from zero at the 6th place', async () => {
  const c = await kpiContact('amount', '123456789.123456');
  const res = await c.add('0.0000005');
  assert.deepEqual(res.body.kpis, { amount: 0.000001 });
  assert.equal(await c.total(), 123456789.123457);
  await c.add(-0.0000004);
  await c.add(1e-7);
  assert.equal(await c.total(), 123456789.123457);
  await c.add('-0.1234565');
  assert.equal(await c.total(), 123456789.0);
});

test('at the edge of the range, concurrent increments never leave it: exactly those that fit are added', async () => {
  const c = await kpiContact('edge', '999999990');
  const results = await Promise.all(Array.from({ length: 20 }, () => c.add(1)));
  assert.ok(results.every((r) => r.status === 200));
  const added = results.filter((r) => r.body.kpis.edge === 1).length;
  const skipped = results.filter((r) => r.body.warnings.length === 1 && r.body.warnings[0].path === '/kpis/edge').length;
  assert.deepEqual([added, skipped], [9, 11]);
  assert.equal(await c.total(), 999999999);
});
