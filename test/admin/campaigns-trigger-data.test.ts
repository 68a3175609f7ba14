import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeContact } from '../../src/modules/contacts/contacts.service.js';
import { randomEmail, randomPhone } from '../helpers/factories.js';
import { eventually, sendRow, startTestHerald, type TestHerald } from '../helpers/herald.js';
import { assertError, signedIn } from './helpers.js';

/**
 * Issue 10, in the admin panel: a preview and a test send take sample trigger data (`data`,
 * rendered as `{{ trigger.* }}`, with a trigger's limits); without it, trigger.* renders empty.
 */
let t: TestHerald;
before(async () => {
  t = await startTestHerald();
});
after(() => t.close());

const email = {
  from: 'Acme <news@acme.test>',
  subject: 'Order {{ trigger.order }}',
  html: '<p>Hi {{ contact.name }}, order {{ trigger.order }} {{ trigger.note }}</p>',
  text: 'Order {{ trigger.order }}.',
};
const contact = (accountId: string) =>
  writeContact(t.db, accountId, { email: randomEmail(), phone: randomPhone(), name: 'Ada Lovelace' }).then((r) => r.id);
const sendsOf = (campaignId: string) => t.db.kysely.selectFrom('sends').selectAll().where('campaign_id', '=', campaignId).execute();

describe('preview with sample trigger data', () => {
  test('email: rendered with the sample (escaped in HTML); without one, trigger.* is empty; nothing is stored', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'P', channel: 'email', ...email })).body;
    const contactId = await contact(accountId);
    const withData = await panel.post(`/campaigns/${id}/preview`, { contactId, data: { order: 'A-42', note: '<i>gift</i>' } });
    assert.equal(withData.status, 200, JSON.stringify(withData.body));
    assert.equal(withData.body.subject, 'Order A-42');
    assert.match(withData.body.html, /^<p>Hi Ada Lovelace, order A-42 &lt;i&gt;gift&lt;\/i&gt;<\/p>/);
    assert.match(withData.body.text, /^Order A-42\./);

    const without = await panel.post(`/campaigns/${id}/preview`, { contactId });
    assert.equal(without.body.subject, 'Order');
    assert.match(without.body.text, /^Order \./);
    assert.deepEqual(await sendsOf(id), [], 'nothing sent');
  });

  test('WhatsApp: a parameter from the sample data', async () => {
    const { panel, accountId } = await signedIn(t, { plan: 'pro' });
    const { id } = (
      await panel.post('/campaigns', {
        name: 'W',
        channel: 'whatsapp',
        whatsappTemplate: 'order_ready',
        language: 'en_US',
        whatsappParams: ['{{ contact.name }}', '{{ trigger.order }}'],
      })
    ).body;
    const res = await panel.post(`/campaigns/${id}/preview`, { contactId: await contact(accountId), data: { order: 'W-7' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.params, ['Ada Lovelace', 'W-7']);
  });

  test('sample data that is not an object, over 16 KiB or too deep is 400 at /data', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'P', channel: 'email', ...email })).body;
    const contactId = await contact(accountId);
    assertError(await panel.post(`/campaigns/${id}/preview`, { contactId, data: ['A-42'] }), 400, 'Validation Error', '/data');
    const big = assertError(
      await panel.post(`/campaigns/${id}/preview`, { contactId, data: { blob: 'x'.repeat(16 * 1024) } }),
      400,
      'Validation Error',
    );
    assert.deepEqual(big.details, [{ path: '/data', message: 'must be at most 16 KiB (as JSON)' }]);
    let deep: Record<string, unknown> = { a: 1 };
    for (let level = 1; level <= 32; level++) deep = { a: deep };
    assertError(
      await panel.post(`/campaigns/${id}/preview`, { contactId, data: deep }),
      400,
      'Validation Error',
      `/data${'/a'.repeat(32)}`,
    );
  });
});

describe('test send with sample trigger data', () => {
  test('stored with the test send and rendered into the message the outbox keeps', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'T', channel: 'email', ...email })).body;
    const res = await panel.post(`/campaigns/${id}/test-send`, { contactId: await contact(accountId), data: { order: 'T-1' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(JSON.parse((await sendRow(t.db, res.body.sendId)).trigger_data!), { order: 'T-1' });
    const kept = await eventually(
      () => t.db.kysely.selectFrom('outbox_messages').selectAll().where('send_id', '=', res.body.sendId).executeTakeFirst(),
      5000,
      'the test message in the outbox',
    );
    assert.equal(kept.subject, '[Test] Order T-1');
    assert.match(kept.text ?? '', /^Order T-1\./);
  });

  test('without data trigger.* renders empty; data over 16 KiB is 400 at /data and queues nothing', async () => {
    const { panel, accountId } = await signedIn(t);
    const { id } = (await panel.post('/campaigns', { name: 'T', channel: 'email', ...email })).body;
    const contactId = await contact(accountId);
    const big = assertError(
      await panel.post(`/campaigns/${id}/test-send`, { contactId, data: { blob: 'x'.repeat(16 * 1024) } }),
      400,
      'Validation Error',
    );
    assert.deepEqual(big.details, [{ path: '/data', message: 'must be at most 16 KiB (as JSON)' }]);
    assert.deepEqual(await sendsOf(id), []);

    const res = await panel.post(`/campaigns/${id}/test-send`, { contactId });
    assert.equal((await sendRow(t.db, res.body.sendId)).trigger_data, null);
    const kept = await eventually(
      () => t.db.kysely.selectFrom('outbox_messages').selectAll().where('send_id', '=', res.body.sendId).executeTakeFirst(),
      5000,
      'the test message in the outbox',
    );
    assert.equal(kept.subject, '[Test] Order');
  });
});
