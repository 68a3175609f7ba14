import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { inTransaction } from '../../src/db/transaction.js';
import { deleteContactRows } from '../../src/modules/contacts/contact-erase.repo.js';
import { randomEmail, randomPhone } from '../helpers/factories.js';
import { contactTenant, useTestApp } from './helpers.js';

/**
 * A lead that updates its contact in one statement on PostgreSQL (contact-write-first.ts: one
 * identifier, no metadata, fields or KPIs) answers and writes what the read-decide-write path
 * does. A request with an Idempotency-Key always takes that path (in a transaction), so the
 * same lead sent both ways is compared. On SQLite both are the same path: the same assertions hold.
 */
const app = useTestApp();

const withKey = () => ({ 'idempotency-key': `k-${Math.random().toString(36).slice(2)}` });

/** The profile without what differs between two contacts (ids, addresses, times). */
function shape(profile: Awaited<ReturnType<Awaited<ReturnType<typeof contactTenant>>['profile']>>) {
  assert.ok(profile);
  return {
    name: profile.name,
    tags: profile.tags,
    metadata: profile.metadata,
    notes: profile.notes.map((n) => [n.text, n.createdBy]),
    trackers: profile.trackers.length,
    archived: profile.archived,
  };
}

test('an update by email, phone or id answers and writes what the two-statement path does', async () => {
  const t = await contactTenant(app());
  const leads = [
    (email: string) => ({ email, tags: ['b', 'c'], tagsRemove: ['a'] }),
    (email: string) => ({ email, name: 'Renamed', note: { text: 'called', createdBy: 'sales' }, tracker: `tk-${email}` }),
    (email: string) => ({ email: email.toUpperCase(), tags: ['Été  Client'] }),
  ];
  for (const lead of leads) {
    const [one, two] = [randomEmail(), randomEmail()];
    const ids = [];
    for (const email of [one, two]) ids.push((await t.lead({ email, name: 'Ada', tags: ['a'] })).body.id);
    const direct = await t.lead(lead(one));
    const keyed = await t.api.post('/api/leads', lead(two), withKey());
    assert.equal(direct.status, 200, JSON.stringify(direct.body));
    assert.equal(keyed.status, 200, JSON.stringify(keyed.body));
    assert.deepEqual(ownFree(direct.body), ownFree(keyed.body));
    assert.equal(direct.body.id, ids[0]);
    assert.equal(direct.body.created, false);
    assert.deepEqual(shape(await t.profile({ email: one })), shape(await t.profile({ email: two })));
  }
  // By phone and by id.
  const phone = randomPhone();
  const created = await t.lead({ phone, name: 'Bea' });
  const byPhone = await t.lead({ phone, tags: ['p'] });
  assert.deepEqual(byPhone.body, { id: created.body.id, created: false, phone: byPhone.body.phone, tags: ['p'], warnings: [] });
  const byId = await t.lead({ id: created.body.id, name: 'Bea B', tagsRemove: ['p'] });
  assert.deepEqual(byId.body, { id: created.body.id, created: false, name: 'Bea B', tagsRemove: ['p'], warnings: [] });
  const profile = await t.profile({ id: created.body.id });
  assert.deepEqual([profile?.name, profile?.tags, profile?.phones], ['Bea B', [], [phone]]);
});

/** A body without the members that name its own contact (the same lead is sent for two). */
const ownFree = (body: Record<string, unknown>) => ({ ...body, id: 'x', email: typeof body.email, tracker: typeof body.tracker });

test('the fallbacks: metadata is merged, a second identifier is added or refused, nobody found creates', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const created = await t.lead({ email, name: 'Ada', metadata: { a: 1, b: 2 } });
  const merged = await t.lead({ email, metadata: { b: 3 } });
  assert.deepEqual([merged.status, merged.body.id, merged.body.created], [200, created.body.id, false]);
  assert.deepEqual((await t.profile({ email }))?.metadata, { a: 1, b: 3 });

  const phone = randomPhone();
  const added = await t.lead({ email, phone });
  assert.deepEqual([added.status, added.body.id, added.body.created], [200, created.body.id, false]);
  assert.deepEqual((await t.profile({ email }))?.phones, [phone]);
  const otherEmail = randomEmail();
  await t.lead({ email: otherEmail, name: 'Other' });
  const conflict = await t.lead({ email: otherEmail, phone });
  assert.equal(conflict.status, 409, JSON.stringify(conflict.body));

  const fresh = randomEmail();
  const nobody = await t.lead({ email: fresh, tags: ['x'] });
  assert.equal(nobody.status, 400, JSON.stringify(nobody.body));
  assert.equal(await t.profile({ email: fresh }), undefined);
  const create = await t.lead({ email: fresh, name: 'New', tags: ['x'] });
  assert.deepEqual([create.status, create.body.created, (await t.profile({ email: fresh }))?.tags], [200, true, ['x']]);
});

test('a contact erased while the update waits for its row is not brought back', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const created = await t.lead({ email, name: 'Gone Soon' });
  let pending: Promise<{ status: number; body: { id?: string; created?: boolean } }> | undefined;
  await inTransaction(app().db, async (tx) => {
    await deleteContactRows(tx, t.accountId, created.body.id);
    // On PostgreSQL the write's statement starts now, sees the contact, and waits for its row's
    // lock until the erase commits (on SQLite it waits for the transaction).
    pending = t.lead({ email, tags: ['back'] });
    await sleep(150);
  });
  const res = await pending!;
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(await t.profile({ id: created.body.id }), undefined);
  assert.equal(await t.profile({ email }), undefined);
  // With a name it creates a new contact, never the erased one.
  const again = await t.lead({ email, name: 'Someone New' });
  assert.equal(again.body.created, true);
  assert.notEqual(again.body.id, created.body.id);
});

test('concurrent updates of one contact without a version guard all land', async () => {
  const t = await contactTenant(app());
  const email = randomEmail();
  const created = await t.lead({ email, name: 'Busy' });
  const tags = Array.from({ length: 20 }, (_, i) => `t${i}`);
  const answers = await Promise.all(tags.map((tag) => t.lead({ email, tags: [tag], note: { text: tag, createdBy: 'x' } })));
  assert.deepEqual(
    answers.map((a) => [a.status, a.body.id, a.body.created]),
    tags.map(() => [200, created.body.id, false]),
  );
  const profile = await t.profile({ email });
  assert.deepEqual([...(profile?.tags ?? [])].sort(), [...tags].sort());
  assert.equal(profile?.notes.length, 20);
});
