import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { setContactFlags } from '../../src/modules/contacts/contact-lookups.js';
import { deleteField, deleteKpi, renameField, renameKpi } from '../../src/modules/definitions/definitions.service.js';
import { createKey, deleteKey, updateKey } from '../../src/modules/keys/keys.service.js';
import { deleteSegment, replaceSegment } from '../../src/modules/segments/segments.service.js';
import { trackEngagement } from '../../src/modules/tracking/tracking.service.js';
import { deleteUser } from '../../src/modules/users/users.service.js';
import { claimDue } from '../../src/webhooks/deliveries.repo.js';
import { login } from '../admin/helpers.js';
import {
  insertSend,
  makeContact,
  makeEmailCampaign,
  makeField,
  makeKpi,
  makeSegment,
  makeTenant,
  makeUser,
  PASSWORD,
} from '../helpers/factories.js';
import { startApp } from '../helpers/harness.js';

/**
 * On SQLite a write outside a transaction commits at `synchronous = FULL`: its fsync runs on the
 * event loop and stops every request and delivery of the process meanwhile. Every write goes
 * through the commit queue instead (db/transaction.ts, docs/decisions.md). This runs the
 * services' writes that used to commit on their own and checks that none does any more.
 */
test('on SQLite, the services write only inside transactions of the commit queue', {
  skip: Boolean(process.env.DATABASE_URL),
}, async () => {
  const outside: string[] = [];
  const t = await startApp({ onWriteOutsideTransaction: (text) => outside.push(text) });
  try {
    // The check itself: a statement run straight on the connection is seen.
    await sql`update accounts set name = name where 0 = 1`.execute(t.db.kysely);
    assert.equal(outside.length, 1, 'a write outside a transaction is reported');

    // Rows the services cannot make by themselves (a send as the dispatcher leaves it).
    const tenant = await makeTenant(t.db, t.config);
    const campaign = await makeEmailCampaign(t, tenant.accountId);
    const send = await insertSend(t.db, tenant.accountId, campaign.id, { status: 'sent' });
    outside.length = 0;

    const other = await makeTenant(t.db, t.config);
    const extraKey = await createKey(t.db, t.config, other.accountId, { name: 'second', scopes: ['leads:write'] });
    await updateKey(t.db, other.accountId, extraKey.id, { name: 'renamed' });
    await deleteKey(t.db, other.accountId, extraKey.id);
    const field = await makeField(t.db, other.accountId, 'plan', 'string');
    await renameField(t.db, other.accountId, field.id, { name: 'tier' });
    await deleteField(t.db, other.accountId, field.id);
    await makeKpi(t.db, other.accountId, 'spend');
    await renameKpi(t.db, other.accountId, 'spend', { name: 'Spend' });
    await deleteKpi(t.db, other.accountId, 'spend');
    const segment = await makeSegment(t.db, other.accountId);
    await replaceSegment(t.db, other.accountId, segment.id, { name: 'renamed', criteria: segment.criteria });
    await deleteSegment(t.db, other.accountId, segment.id);
    const contact = await makeContact(t.db, other.accountId);
    await setContactFlags(t.db, other.accountId, contact.id, { archived: true });

    // Sign-in: a failure (throttle), a success (throttle cleared, session opened); a user removed.
    const admin = await makeUser(t.db, { accountId: other.accountId });
    const user = await makeUser(t.db, { accountId: other.accountId, role: 'member' });
    assert.equal((await login(t.app, admin.email, 'wrong password')).status, 401);
    assert.equal((await login(t.app, admin.email, PASSWORD)).status, 200);
    await deleteUser(t.db, other.accountId, user.userId, admin.userId);

    // Tracking and the webhook queue's claim.
    assert.equal(await trackEngagement(t.db, { sendId: send.id, kind: 'open' }, { count: true }), true);
    await claimDue(t.db, Date.now(), 60_000, 10);

    assert.deepEqual(outside, []);
  } finally {
    await t.close();
  }
});
