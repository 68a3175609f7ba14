import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { Transport } from '../../src/channels/channel.js';
import { Dispatcher } from '../../src/dispatcher/dispatcher.js';
import { queueWebhooksOfSent } from '../../src/herald.js';
import { setContactFlags } from '../../src/modules/contacts/contacts.service.js';
import { apiClient } from '../helpers/app.js';
import { makeEmailCampaign, makeTenant, randomEmail } from '../helpers/factories.js';
import { startTestHerald, type TestHerald } from '../helpers/herald.js';
import { recordStatements, type StatementRecorder } from '../helpers/statements.js';

/**
 * Round trips to PostgreSQL per claimed batch of sends (issues 9 and 12), counted like
 * round-trips.test.ts (the driver's `Client#query`): the claim (which also reads everything the
 * due-time checks and the rendering need), one write ending the sends the checks stopped, and
 * one write for the outcomes delivered together. The count does not grow with the batch.
 *
 * The process serves the API only (no dispatcher of its own); the test runs a dispatcher with a
 * transport that accepts every message at once, so only the dispatcher's statements count.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);

/** Where each count stands today; lower it when a change saves a round trip. */
const PINNED = {
  /** Claim with its data, one outcome write. */
  'batch, every send delivered': 2,
  /** Claim with its data, one write ending the stopped sends, one outcome write. */
  'batch, some sends stopped at due time (opt-out)': 3,
  /** Claim with its data; the outcome write with the BEGIN, then every webhook delivery's insert with the COMMIT. */
  'batch of a campaign with webhooks, every send delivered': 3,
} as const;

describe('round trips per claimed batch of sends on PostgreSQL', { skip: !onPostgres && 'PostgreSQL only (DATABASE_URL)' }, () => {
  let t: TestHerald;
  let dispatcher: Dispatcher;
  let recorder: StatementRecorder;
  let delivered = 0;

  before(async () => {
    t = await startTestHerald({}, { role: 'api' });
    const accept: Transport = {
      deliver: async () => {
        delivered++;
        return { providerMessageId: null, delivered: true };
      },
    };
    dispatcher = new Dispatcher({
      db: t.db,
      config: t.config,
      logger: pino({ level: 'silent' }),
      channels: { email: accept, whatsapp: accept },
      concurrency: 64,
      sentInTx: queueWebhooksOfSent,
    });
    recorder = recordStatements();
    // Due sends other test files left in the shared database go first, uncounted.
    while ((await dispatcher.runOnce()) > 0);
  });
  after(async () => {
    recorder.restore();
    await dispatcher.stop();
    await t.close();
  });

  /** Queues `n` due sends (`optedOut` of them to opted-out contacts) and counts the statements of the batch that claims them. */
  async function batchOf(n: number, optedOut = 0, webhooks: string[] = []): Promise<string[]> {
    const { accountId, key } = await makeTenant(t.db, t.config);
    const api = apiClient(t.app, key);
    const campaign = await makeEmailCampaign(t, accountId, { webhooks });
    for (let i = 0; i < n; i++) {
      const res = await api.post('/api/campaigns/trigger', { campaignId: campaign.id, lead: { email: randomEmail(), name: 'Ada' } });
      assert.equal(res.body.status, 'queued', JSON.stringify(res.body));
      if (i < optedOut) await setContactFlags(t.db, accountId, res.body.leadId, { optedOut: true });
    }
    delivered = 0;
    const { result: claimed, statements } = await recorder.during(() => dispatcher.runOnce());
    // The API's wake-up of worker processes (a trigger's NOTIFY, sent after its response) is not the batch's.
    const sent = statements.filter((text) => !text.includes('pg_notify'));
    assert.equal(claimed, n, 'the batch is the sends just queued');
    assert.equal(delivered, n - optedOut);
    const rows = await t.db.kysely.selectFrom('sends').select('status').where('campaign_id', '=', campaign.id).execute();
    const statuses = rows.map((r) => r.status).sort();
    assert.deepEqual(statuses, [...Array(optedOut).fill('optout'), ...Array(n - optedOut).fill('sent')].sort());
    return sent;
  }

  function pin(line: keyof typeof PINNED, sent: string[]): void {
    assert.equal(sent.length, PINNED[line], `${line}: ${sent.length} statements\n${sent.join('\n---\n')}`);
  }

  test('a batch costs the same few statements whatever its size', async () => {
    pin('batch, every send delivered', await batchOf(1));
    pin('batch, every send delivered', await batchOf(20));
    pin('batch, some sends stopped at due time (opt-out)', await batchOf(2, 1));
    pin('batch, some sends stopped at due time (opt-out)', await batchOf(20, 5));
  });

  test('a campaign with webhooks: their deliveries are queued with the COMMIT of the outcome, whatever the batch size', async () => {
    const urls = ['https://hooks.example.com/a', 'https://hooks.example.com/b'];
    for (const n of [1, 20]) {
      const sent = await batchOf(n, 0, urls);
      pin('batch of a campaign with webhooks, every send delivered', sent);
      const inserts = sent
        .at(-1)!
        .split(' ;; ')
        .filter((text) => /insert into "webhook_deliveries"/.test(text));
      assert.equal(inserts.length, n, "one insert per send, all in the COMMIT's write");
    }
  });
});
