import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCampaign, findCampaign, updateCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { makeAccount } from '../helpers/factories.js';
import { type CampaignTestEnv, campaignRow, emailCampaign, openTestDb, rejectsWith, whatsappCampaign } from './helpers.js';

let t: CampaignTestEnv;
before(async () => {
  t = await openTestDb();
});
after(() => t.close());

async function emailSetUp(extra = {}) {
  const acc = (await makeAccount(t.db)).id;
  const { id } = await createCampaign(t.db, t.config, acc, emailCampaign(extra));
  return { acc, id, get: async () => (await findCampaign(t.db.kysely, acc, id))! };
}

describe('campaign update', () => {
  test('only the members given change; the rest is kept', async () => {
    const { acc, id, get } = await emailSetUp({ text: 'plain', webhooks: ['https://93.184.215.14/a'] });
    const before = await get();
    assert.deepEqual(await updateCampaign(t.db, t.config, acc, id, { subject: 'New {{ contact.name }}' }), { id });
    const after = await get();
    assert.equal(after.email.subject, 'New {{ contact.name }}');
    assert.deepEqual(
      { ...after, email: { ...after.email, subject: null }, updatedAt: 0 },
      { ...before, email: { ...before.email, subject: null }, updatedAt: 0 },
    );
    assert.ok(after.updatedAt >= before.updatedAt);
  });

  test('an empty string or null clears an optional text', async () => {
    const { acc, id, get } = await emailSetUp({ text: 'plain' });
    await updateCampaign(t.db, t.config, acc, id, { text: '', html: null });
    assert.deepEqual([(await get()).email.text, (await get()).email.html], [null, null]);
  });

  test('a webhook list given replaces the stored one; an empty list removes them all', async () => {
    const { acc, id, get } = await emailSetUp({ webhooks: ['https://93.184.215.14/a', 'https://93.184.215.14/b'] });
    await updateCampaign(t.db, t.config, acc, id, { webhooks: ['https://8.8.8.8/c'] });
    assert.deepEqual((await get()).webhooks, ['https://8.8.8.8/c']);
    await updateCampaign(t.db, t.config, acc, id, { name: 'renamed' });
    assert.deepEqual((await get()).webhooks, ['https://8.8.8.8/c'], 'an update without webhooks keeps them');
    await updateCampaign(t.db, t.config, acc, id, { webhooks: [] });
    assert.deepEqual((await get()).webhooks, []);
  });

  test('WhatsApp parameters given replace the stored list', async () => {
    const acc = (await makeAccount(t.db)).id;
    const { id } = await createCampaign(t.db, t.config, acc, whatsappCampaign({ whatsappParams: ['a', 'b'] }));
    await updateCampaign(t.db, t.config, acc, id, { whatsappParams: ['{{ contact.name }}'] });
    assert.deepEqual((await findCampaign(t.db.kysely, acc, id))!.whatsapp.params, ['{{ contact.name }}']);
  });

  test('switching to delay mode needs a delay; switching back to immediate resets it to 0', async () => {
    const { acc, id, get } = await emailSetUp();
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, { mode: 'delay' }), 'VALIDATION', '/delaySeconds', /delay mode needs/);
    await updateCampaign(t.db, t.config, acc, id, { mode: 'delay', delaySeconds: 300 });
    assert.deepEqual([(await get()).mode, (await get()).delaySeconds], ['delay', 300]);
    await updateCampaign(t.db, t.config, acc, id, { delaySeconds: 600 });
    assert.equal((await get()).delaySeconds, 600, 'the delay alone changes in delay mode');
    await updateCampaign(t.db, t.config, acc, id, { mode: 'immediate' });
    assert.deepEqual([(await get()).mode, (await get()).delaySeconds], ['immediate', 0]);
  });

  test('re-entry off resets the cooldown; a cooldown on a campaign without re-entry is refused', async () => {
    const { acc, id, get } = await emailSetUp();
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, { cooldownDays: 3 }), 'VALIDATION', '/cooldownDays', /re-entry/);
    await updateCampaign(t.db, t.config, acc, id, { reentry: true, cooldownDays: 3 });
    await updateCampaign(t.db, t.config, acc, id, { cooldownDays: 10 });
    assert.deepEqual([(await get()).reentry, (await get()).cooldownDays], [true, 10]);
    await updateCampaign(t.db, t.config, acc, id, { reentry: false });
    assert.deepEqual([(await get()).reentry, (await get()).cooldownDays], [false, 0]);
  });

  test('the merged result is judged: emptying an active campaign is refused and changes nothing', async () => {
    const { acc, id } = await emailSetUp({ active: true });
    const before = await campaignRow(t.db, id);
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, { subject: '', name: 'changed' }), 'VALIDATION', '/active', /no subject/);
    assert.deepEqual(await campaignRow(t.db, id), before);
  });

  test('a bad member is refused and nothing of the update is written', async () => {
    const { acc, id } = await emailSetUp({ webhooks: ['https://93.184.215.14/a'] });
    const before = await findCampaign(t.db.kysely, acc, id);
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, { name: 'x', html: '{% endif %}', webhooks: [] }), 'VALIDATION', '/html');
    assert.deepEqual(await findCampaign(t.db.kysely, acc, id), before);
  });

  test('changing an email campaign with webhooks to WhatsApp is refused until the webhooks are removed', async () => {
    const { acc, id, get } = await emailSetUp({ webhooks: ['https://93.184.215.14/a'] });
    const wa = { channel: 'whatsapp' as const, whatsappTemplate: 'hello', language: 'en' };
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, wa), 'VALIDATION', '/webhooks', /email campaigns only/);
    assert.equal((await get()).channel, 'email');
    await updateCampaign(t.db, t.config, acc, id, { ...wa, webhooks: [] });
    assert.deepEqual([(await get()).channel, (await get()).webhooks], ['whatsapp', []]);
  });

  test('an unknown campaign or account is refused', async () => {
    const { acc } = await emailSetUp();
    await rejectsWith(updateCampaign(t.db, t.config, acc, 'cmp_nope', { name: 'x' }), 'CAMPAIGN_NOT_FOUND');
    await rejectsWith(updateCampaign(t.db, t.config, 'acc_nope', 'cmp_nope', { name: 'x' }), 'ACCOUNT_NOT_FOUND');
  });
});
