import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StaleRead } from '../../src/db/write-unit.js';
import type { ContactWritePlan } from '../../src/modules/contacts/contact-write-plan.js';
import { applyTriggerWithContact } from '../../src/modules/sends/trigger-write.repo.js';
import { apiClient } from '../helpers/app.js';
import { makeAccount, makeKey, randomEmail } from '../helpers/factories.js';
import { makeEmailCampaign, startTestHerald, type TestHerald } from '../helpers/herald.js';

/**
 * The write of a trigger with a `lead` object (trigger-write.repo.ts), both engines: a Delay
 * restart decided on a contact that has moved on since the read writes nothing, neither the
 * contact nor the send (on PostgreSQL the statement locks the contact as read before it
 * restarts the send: one lock order, contact then send, and no half-written restart).
 */
let t: TestHerald;
before(async () => {
  t = await startTestHerald({}, { role: 'api' });
});
after(() => t.close());

test('a lead-object restart whose contact changed since the read writes nothing: StaleRead, the send as it was', async () => {
  const { id: accountId } = await makeAccount(t.db, { allowance: null });
  const { key } = await makeKey(t.db, t.config, accountId);
  const api = apiClient(t.app, key);
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { mode: 'delay', delaySeconds: 3600 });
  const email = randomEmail();
  const first = await api.post('/api/campaigns/trigger', { campaignId, lead: { email, name: 'Ada' }, data: { n: 1 } });
  assert.equal(first.body.status, 'pending', JSON.stringify(first.body));
  const contactId = first.body.leadId as string;
  const sendId = first.body.sendId as string;
  const send = () =>
    t.db.kysely.selectFrom('sends').select(['status', 'due_at', 'trigger_data']).where('id', '=', sendId).executeTakeFirstOrThrow();
  const version = async () =>
    Number((await t.db.kysely.selectFrom('contacts').select('version').where('id', '=', contactId).executeTakeFirstOrThrow()).version);
  const before = await send();
  const read = await version();
  // Another write moves the contact on after the trigger's read.
  assert.equal((await api.post('/api/leads', { email, tags: ['moved'] })).status, 200);
  const moved = await version();
  assert.ok(moved > read);

  const now = Date.now() + 60_000;
  const contactPlan: ContactWritePlan = {
    contactId,
    now,
    contact: { kind: 'update', version: read, name: 'Ada Stale' },
    tagsAdd: [],
    tagsRemove: [],
    fieldSets: [],
    fieldClears: [],
    kpis: [],
  };
  await assert.rejects(
    applyTriggerWithContact(
      t.db.kysely,
      accountId,
      contactPlan,
      {
        kind: 'restart',
        accountId,
        sendId,
        dueAt: now + 3_600_000,
        triggerData: '{"n":2}',
        now,
      },
      false,
    ),
    StaleRead,
  );
  assert.deepEqual(await send(), before);
  assert.equal(await version(), moved);
  const name = await t.db.kysely.selectFrom('contacts').select('name').where('id', '=', contactId).executeTakeFirstOrThrow();
  assert.equal(name.name, 'Ada');
});
