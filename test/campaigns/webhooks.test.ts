import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCampaign, findCampaign, listCampaigns, updateCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { makeAccount } from '../helpers/factories.js';
import { type CampaignTestEnv, emailCampaign, openTestDb, rejectsWith, whatsappCampaign } from './helpers.js';

let t: CampaignTestEnv;
before(async () => {
  t = await openTestDb();
});
after(() => t.close());

const account = async () => (await makeAccount(t.db, { plan: 'pro' })).id;
const hooks = (n: number) => Array.from({ length: n }, (_, i) => `https://93.184.215.14/hook/${i}`);

describe('campaign webhooks', () => {
  test('up to 3 are stored by position', async () => {
    const acc = await account();
    const { id } = await createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: hooks(3) }));
    const rows = await t.db.kysely
      .selectFrom('campaign_webhooks')
      .select(['position', 'url', 'account_id'])
      .where('campaign_id', '=', id)
      .orderBy('position')
      .execute();
    assert.deepEqual(
      rows,
      hooks(3).map((url, position) => ({ position, url, account_id: acc })),
    );
  });

  test('a 4th webhook is refused, on create and on update', async () => {
    const acc = await account();
    await rejectsWith(createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: hooks(4) })), 'VALIDATION', '/webhooks', /at most 3/);
    assert.deepEqual(await listCampaigns(t.db, acc), []);
    const { id } = await createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: hooks(1) }));
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, { webhooks: hooks(4) }), 'VALIDATION', '/webhooks', /at most 3/);
    assert.deepEqual((await findCampaign(t.db.kysely, acc, id))!.webhooks, hooks(1));
  });

  test('only http and https URLs are accepted', async () => {
    const acc = await account();
    for (const url of ['ftp://93.184.215.14/x', 'javascript:alert(1)', 'file:///etc/passwd']) {
      await rejectsWith(
        createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: [url] })),
        'VALIDATION',
        '/webhooks/0',
        /must be http or https/,
      );
    }
    await rejectsWith(
      createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: ['not a url'] })),
      'VALIDATION',
      '/webhooks/0',
      /not a valid URL/,
    );
  });

  test('loopback and private addresses are refused, with the index of the offending URL', async () => {
    const acc = await account();
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'https://10.0.0.1/hook',
      'http://[::1]/hook',
      'http://192.168.1.20/',
      'http://169.254.169.254/latest/meta-data',
    ]) {
      await rejectsWith(
        createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: ['https://93.184.215.14/ok', url] })),
        'VALIDATION',
        '/webhooks/1',
        /private or loopback/,
      );
    }
    assert.deepEqual(await listCampaigns(t.db, acc), []);
  });

  test('IPv6 spellings of private IPv4 addresses are refused (compatible, mapped, NAT64, 6to4)', async () => {
    const acc = await account();
    const spellings = [
      'http://[::7f00:1]/hook',
      'http://[::127.0.0.1]/hook',
      'http://[::ffff:7f00:1]/hook',
      'http://[::ffff:a00:1]/hook',
      'http://[64:ff9b::7f00:1]/hook',
      'http://[64:ff9b::a9fe:a9fe]/hook',
      'http://[2002:7f00:1::1]/hook',
      'http://[2002:c0a8:114::]/hook',
    ];
    for (const url of spellings) {
      await rejectsWith(
        createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: [url] })),
        'VALIDATION',
        '/webhooks/0',
        /private or loopback/,
      );
    }
    assert.deepEqual(await listCampaigns(t.db, acc), []);
    // The same forms around a public IPv4 address are receivers like any other (a NAT64 gateway reaches them).
    const { id } = await createCampaign(
      t.db,
      t.config,
      acc,
      emailCampaign({ webhooks: ['http://[64:ff9b::5db8:d70e]/hook', 'http://[2002:5db8:d70e::1]/hook'] }),
    );
    assert.equal((await findCampaign(t.db.kysely, acc, id))!.webhooks.length, 2);
  });

  test('a host name that resolves to loopback is refused', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: ['http://localhost:3000/hook'] })),
      'VALIDATION',
      '/webhooks/0',
      /private or loopback/,
    );
  });

  test('private addresses are refused on update too, and the stored list is kept', async () => {
    const acc = await account();
    const { id } = await createCampaign(t.db, t.config, acc, emailCampaign({ webhooks: hooks(1) }));
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, { webhooks: ['http://10.0.0.1/x'] }), 'VALIDATION', '/webhooks/0', /private/);
    assert.deepEqual((await findCampaign(t.db.kysely, acc, id))!.webhooks, hooks(1));
  });

  test('WEBHOOK_ALLOW_PRIVATE=true lets webhooks target loopback and private addresses', async () => {
    assert.equal(t.allowPrivate.webhookAllowPrivate, true);
    const acc = await account();
    const local = ['http://127.0.0.1:8080/hook', 'https://10.0.0.1/hook', 'http://[::1]/hook'];
    const { id } = await createCampaign(t.db, t.allowPrivate, acc, emailCampaign({ webhooks: local }));
    assert.deepEqual((await findCampaign(t.db.kysely, acc, id))!.webhooks, local);
    await updateCampaign(t.db, t.allowPrivate, acc, id, { webhooks: ['http://localhost:9999/x'] });
    assert.deepEqual((await findCampaign(t.db.kysely, acc, id))!.webhooks, ['http://localhost:9999/x']);
  });

  test('the scheme rule holds even when private addresses are allowed', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.allowPrivate, acc, emailCampaign({ webhooks: ['ftp://127.0.0.1/'] })),
      'VALIDATION',
      '/webhooks/0',
      /http or https/,
    );
  });

  test('webhooks belong to email campaigns only', async () => {
    const acc = await account();
    await rejectsWith(
      createCampaign(t.db, t.config, acc, whatsappCampaign({ webhooks: hooks(1) })),
      'VALIDATION',
      '/webhooks',
      /email campaigns only/,
    );
    const { id } = await createCampaign(t.db, t.config, acc, whatsappCampaign());
    await rejectsWith(updateCampaign(t.db, t.config, acc, id, { webhooks: hooks(1) }), 'VALIDATION', '/webhooks', /email campaigns only/);
  });
});
