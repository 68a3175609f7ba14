import { inTransaction } from '../../src/db/transaction.js';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { enqueueWebhookDeliveries } from '../../src/webhooks/enqueue.js';
import { apiClient, type TestApp } from '../helpers/app.js';
import { insertEngagement, insertSend, makeField, makeKey, makeKpi, randomEmail, randomPhone, uniq } from '../helpers/factories.js';
import { makeEmailCampaign } from '../helpers/herald.js';

/**
 * A contact with something in every table that can name them (docs/decisions.md, Erasing a
 * contact), written through the public API where it reaches them (leads, events, trigger, with
 * Idempotency-Keys) and directly where only the dispatcher or a mail client would (sends in
 * every outcome, opens, clicks, an unsubscribe, a bounce, the outbox, webhook deliveries).
 * A second contact of the same account gets the same, so a test can check it is untouched.
 */
export async function makeErasable(t: TestApp, accountId: string, day = Date.now() - 86_400_000) {
  const { key } = await makeKey(t.db, t.config, accountId);
  const api = apiClient(t.app, key);
  await makeField(t.db, accountId, uniq('City'), 'string').catch(() => undefined);
  const fields = await t.db.kysely.selectFrom('custom_fields').select('name').where('account_id', '=', accountId).execute();
  const kpiId = uniq('orders');
  await makeKpi(t.db, accountId, kpiId);
  const { id: campaignId } = await makeEmailCampaign(t, accountId, { webhooks: ['https://hooks.example.com/herald'] });

  async function person(name: string) {
    const email = randomEmail();
    const phone = randomPhone();
    const idem = (k: string) => ({ 'idempotency-key': `${k}-${uniq()}` });
    const lead = await api.post(
      '/api/leads',
      {
        name,
        email,
        phone,
        tags: ['VIP'],
        fields: [{ key: fields[0]!.name, value: 'Paris' }],
        kpis: { [kpiId]: 3 },
        metadata: { plan: 'gold' },
        note: { text: 'called', createdBy: 'ops' },
        tracker: uniq('visitor'),
      },
      idem('lead'),
    );
    if (lead.status !== 200) throw new Error(JSON.stringify(lead.body));
    const contactId: string = lead.body.id;
    await api.post('/api/events', { leadId: contactId, type: 'purchase', value: '42', metadata: { sku: 'A1' } }, idem('event'));
    const trigger = await api.post('/api/campaigns/trigger', { campaignId, lead: contactId, data: { order: 'A-1' } }, idem('trigger'));
    if (trigger.status !== 200) throw new Error(JSON.stringify(trigger.body));

    const sent = await insertSend(t.db, accountId, campaignId, {
      contactId,
      status: 'sent',
      at: day,
      to: email,
      processed: true,
      delivered: true,
    });
    await insertEngagement(t.db, accountId, campaignId, { id: sent.id, contactId }, 'open', day + 1000);
    await insertEngagement(t.db, accountId, campaignId, { id: sent.id, contactId }, 'click', day + 2000);
    await t.db.kysely
      .insertInto('engagements')
      .values({
        id: uniq('eng_'),
        account_id: accountId,
        campaign_id: campaignId,
        send_id: sent.id,
        contact_id: contactId,
        kind: 'unsubscribe',
        url: null,
        created_at: day + 3000,
      })
      .execute();
    await t.db.kysely
      .updateTable('sends')
      .set({ trigger_data: JSON.stringify({ order: 'A-1', email }) })
      .where('id', '=', sent.id)
      .execute();
    const bounced = await insertSend(t.db, accountId, campaignId, {
      contactId,
      status: 'error',
      at: day + 4000,
      to: email,
      processed: true,
    });
    await t.db.kysely
      .updateTable('sends')
      .set({ bounced_at: day + 4000, reason: `smtp 550: <${email}> no such user` })
      .where('id', '=', bounced.id)
      .execute();
    await t.db.kysely
      .insertInto('suppressed_addresses')
      .values({ account_id: accountId, channel: 'email', address: email, reason: 'smtp 550', send_id: bounced.id, created_at: day + 4000 })
      .execute();
    await t.db.kysely
      .insertInto('outbox_messages')
      .values({
        id: uniq('obx_'),
        account_id: accountId,
        send_id: sent.id,
        campaign_id: campaignId,
        channel: 'email',
        to_address: email,
        from_address: 'news@acme.test',
        subject: `Hello ${name}`,
        html: `<p>Hi ${name}</p>`,
        text: `Hi ${name}`,
        headers: '{}',
        payload: null,
        created_at: day,
      })
      .execute();
    const contact = (await getContactProfile(t.db, accountId, { id: contactId }))!;
    await inTransaction(t.db, (tx) =>
      enqueueWebhookDeliveries(tx, {
        accountId,
        campaignId,
        sendId: sent.id,
        urls: ['https://hooks.example.com/herald'],
        contact,
        now: day,
      }),
    );
    const delivery = await t.db.kysely
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('send_id', '=', sent.id)
      .executeTakeFirstOrThrow();
    await t.db.kysely
      .insertInto('webhook_attempts')
      .values({
        id: uniq('wha_'),
        account_id: accountId,
        delivery_id: delivery.id,
        attempted_at: day,
        duration_ms: 5,
        status_code: 500,
        error: null,
      })
      .execute();
    const sendIds = (await t.db.kysely.selectFrom('sends').select('id').where('contact_id', '=', contactId).execute()).map((s) => s.id);
    return { contactId, name, email, phone, sendIds, waitingSendId: trigger.body.sendId as string | undefined };
  }

  const erased = await person('Ada Lovelace');
  const kept = await person('Grace Hopper');
  return { campaignId, api, erased, kept };
}

/** Every row of the account in the tables that can name a contact, as JSON text per table. */
export async function accountRowsText(t: TestApp, accountId: string): Promise<Record<string, string>> {
  const tables = [
    'contacts',
    'contact_emails',
    'contact_phones',
    'contact_tags',
    'contact_field_values',
    'contact_kpis',
    'contact_notes',
    'trackers',
    'events',
    'sends',
    'engagements',
    'webhook_deliveries',
    'webhook_attempts',
    'outbox_messages',
    'suppressed_addresses',
    'idempotency_keys',
  ] as const;
  const out: Record<string, string> = {};
  for (const table of tables) {
    out[table] = JSON.stringify(await t.db.kysely.selectFrom(table).selectAll().where('account_id', '=', accountId).execute());
  }
  return out;
}
