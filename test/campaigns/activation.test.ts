import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { updateAccount } from '../../src/modules/accounts/accounts.service.js';
import { createCampaign, findCampaign, listCampaigns, updateCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { makeAccount } from '../helpers/factories.js';
import { type CampaignTestEnv, emailCampaign, openTestDb, rejectsWith, whatsappCampaign } from './helpers.js';

let t: CampaignTestEnv;
before(async () => {
  t = await openTestDb();
});
after(() => t.close());

const freeAccount = async () => (await makeAccount(t.db)).id;
const proAccount = async () => (await makeAccount(t.db, { plan: 'pro' })).id;
const isActive = async (acc: string, id: string) => (await findCampaign(t.db.kysely, acc, id))!.active;

describe('activation needs a complete configuration', () => {
  test('an email campaign without from, subject and a body cannot be activated; the message names what is missing', async () => {
    const acc = await freeAccount();
    const { id } = await createCampaign(t.db, t.config, acc, { name: 'empty', channel: 'email' });
    await rejectsWith(
      updateCampaign(t.db, t.config, acc, id, { active: true }),
      'VALIDATION',
      '/active',
      /no from, subject, html or text$/,
    );
    assert.equal(await isActive(acc, id), false);
    await updateCampaign(t.db, t.config, acc, id, { from: 'a@example.com', subject: 'Hi' });
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, { active: true }), 'VALIDATION', '/active', /no html or text$/);
  });

  test('an email campaign with a text part only (no HTML) can be activated', async () => {
    const acc = await freeAccount();
    const { id } = await createCampaign(t.db, t.config, acc, emailCampaign({ html: undefined, text: 'Hello {{ contact.name }}' }));
    await updateCampaign(t.db, t.config, acc, id, { active: true });
    assert.equal(await isActive(acc, id), true);
  });

  test('create with activation of an incomplete campaign creates nothing', async () => {
    const acc = await freeAccount();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, { ...emailCampaign(), subject: undefined, active: true }),
      'VALIDATION',
      '/active',
      /no subject/,
    );
    assert.deepEqual(await listCampaigns(t.db, acc), []);
  });

  test('a WhatsApp campaign needs a template and a language to be activated', async () => {
    const acc = await proAccount();
    const { id } = await createCampaign(t.db, t.config, acc, { name: 'wa', channel: 'whatsapp' });
    await rejectsWith(
      updateCampaign(t.db, t.config, acc, id, { active: true }),
      'VALIDATION',
      '/active',
      /no whatsapp template, language$/,
    );
    await rejectsWith(
      updateCampaign(t.db, t.config, acc, id, { active: true, whatsappTemplate: 'hello' }),
      'VALIDATION',
      '/active',
      /no language$/,
    );
    assert.equal(await isActive(acc, id), false);
  });

  test('a campaign can be switched off and on again', async () => {
    const acc = await freeAccount();
    const { id } = await createCampaign(t.db, t.config, acc, emailCampaign({ active: true }));
    assert.equal(await isActive(acc, id), true);
    await updateCampaign(t.db, t.config, acc, id, { active: false });
    assert.equal(await isActive(acc, id), false);
    await updateCampaign(t.db, t.config, acc, id, { active: true });
    assert.equal(await isActive(acc, id), true);
  });
});

describe('WhatsApp needs the pro plan', () => {
  test('on the free plan a WhatsApp campaign is created and edited, but its activation is refused and it stays inactive', async () => {
    const acc = await freeAccount();
    const { id } = await createCampaign(t.db, t.config, acc, whatsappCampaign());
    await updateCampaign(t.db, t.config, acc, id, { language: 'fr' });
    await rejectsWith(
      updateCampaign(t.db, t.config, acc, id, { active: true }),
      'VALIDATION',
      '/active',
      /WhatsApp campaigns need the pro plan.*free plan/,
    );
    const c = (await findCampaign(t.db.kysely, acc, id))!;
    assert.deepEqual([c.active, c.whatsapp.language], [false, 'fr']);
  });

  test('create with activation of a WhatsApp campaign on the free plan fails as a whole and creates nothing', async () => {
    const acc = await freeAccount();
    await rejectsWith(createCampaign(t.db, t.config, acc, whatsappCampaign({ active: true })), 'VALIDATION', '/active', /pro plan/);
    assert.deepEqual(await listCampaigns(t.db, acc), []);
    const webhooks = await t.db.kysely.selectFrom('campaign_webhooks').select('url').where('account_id', '=', acc).execute();
    assert.deepEqual(webhooks, []);
  });

  test('the pro plan allows WhatsApp activation', async () => {
    const acc = await proAccount();
    const created = await createCampaign(t.db, t.config, acc, whatsappCampaign({ active: true }));
    assert.equal(await isActive(acc, created.id), true);
    const later = await createCampaign(t.db, t.config, acc, whatsappCampaign());
    await updateCampaign(t.db, t.config, acc, later.id, { active: true });
    assert.equal(await isActive(acc, later.id), true);
  });

  test('an account upgraded to pro can then activate its WhatsApp campaign', async () => {
    const acc = await freeAccount();
    const { id } = await createCampaign(t.db, t.config, acc, whatsappCampaign());
    await updateAccount(t.db, t.config, acc, { plan: 'pro' });
    await updateCampaign(t.db, t.config, acc, id, { active: true });
    assert.equal(await isActive(acc, id), true);
  });

  test("dropping to free deactivates the account's WhatsApp campaigns, and only those", async () => {
    const acc = await proAccount();
    const wa1 = await createCampaign(t.db, t.config, acc, whatsappCampaign({ active: true }));
    const wa2 = await createCampaign(t.db, t.config, acc, whatsappCampaign({ active: true }));
    const mail = await createCampaign(t.db, t.config, acc, emailCampaign({ active: true }));
    const otherAcc = await proAccount();
    const otherWa = await createCampaign(t.db, t.config, otherAcc, whatsappCampaign({ active: true }));

    await updateAccount(t.db, t.config, acc, { plan: 'free' });
    assert.deepEqual(
      [await isActive(acc, wa1.id), await isActive(acc, wa2.id), await isActive(acc, mail.id), await isActive(otherAcc, otherWa.id)],
      [false, false, true, true],
    );
    await rejectsWith(updateCampaign(t.db, t.config, acc, wa1.id, { active: true }), 'VALIDATION', '/active', /pro plan/);
  });

  test('an account update that does not drop to free leaves WhatsApp campaigns active', async () => {
    const acc = await proAccount();
    const wa = await createCampaign(t.db, t.config, acc, whatsappCampaign({ active: true }));
    await updateAccount(t.db, t.config, acc, { allowance: 50 });
    await updateAccount(t.db, t.config, acc, { plan: 'pro' });
    assert.equal(await isActive(acc, wa.id), true);
  });
});
