import { sql } from 'kysely';
import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import { likeSubstring } from './contact-search.repo.js';

/**
 * SQL of erasing a contact (docs/decisions.md, Erasing a contact). Every statement is bounded
 * by the account and the contact; the caller runs them all in one transaction, in this order:
 * what is found through the contact's sends goes before the sends lose their contact id.
 */

/** What an erased contact's sends and engagements name instead of it: no contact has this id (contact ids are `ld_…`). */
export const ERASED_CONTACT_ID = 'erased';

const TERMINAL_LATER = ['pending', 'queued'] as const;

/** The contact's sends, as a subquery (never materialised: a contact may have many). */
const sendsOf = (db: Queryable, accountId: string, contactId: string) =>
  kyselyOf(db).selectFrom('sends').select('id').where('account_id', '=', accountId).where('contact_id', '=', contactId);

/** Webhook calls about the contact's sends (their payload carries the contact), with their attempts. */
export async function deleteWebhookDeliveries(db: Queryable, accountId: string, contactId: string): Promise<void> {
  const deliveries = kyselyOf(db)
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('account_id', '=', accountId)
    .where('send_id', 'in', sendsOf(db, accountId, contactId));
  await writeOn(db, (q) =>
    q.deleteFrom('webhook_attempts').where('account_id', '=', accountId).where('delivery_id', 'in', deliveries).execute(),
  );
  await writeOn(db, (q) =>
    q
      .deleteFrom('webhook_deliveries')
      .where('account_id', '=', accountId)
      .where('send_id', 'in', sendsOf(db, accountId, contactId))
      .execute(),
  );
}

/** The messages rendered for the contact (outbox transport): their address and personalised content. */
export async function deleteOutboxMessages(db: Queryable, accountId: string, contactId: string): Promise<void> {
  await writeOn(db, (q) =>
    q
      .deleteFrom('outbox_messages')
      .where('account_id', '=', accountId)
      .where('send_id', 'in', sendsOf(db, accountId, contactId))
      .execute(),
  );
}

/** The suppression entries of the contact's addresses, or made by a send of theirs. */
export async function deleteSuppressions(db: Queryable, accountId: string, contactId: string, addresses: string[]): Promise<void> {
  await writeOn(db, (q) =>
    q
      .deleteFrom('suppressed_addresses')
      .where('account_id', '=', accountId)
      .where((eb) => {
        const bySend = eb('send_id', 'in', sendsOf(db, accountId, contactId));
        return addresses.length === 0 ? bySend : eb.or([bySend, eb('address', 'in', addresses)]);
      })
      .execute(),
  );
}

/** Stored answers of idempotent requests whose JSON holds one of these texts (the contact's id or addresses). */
export async function deleteIdempotentAnswers(db: Queryable, accountId: string, texts: string[]): Promise<number> {
  if (texts.length === 0) return 0;
  const result = await writeOn(db, (q) =>
    q
      .deleteFrom('idempotency_keys')
      .where('account_id', '=', accountId)
      .where((eb) => eb.or(texts.map((text) => sql<boolean>`body like ${likeSubstring(text)} escape '\\'`)))
      .executeTakeFirst(),
  );
  return Number(result.numDeletedRows);
}

/** Sends not yet gone out end as cancelled, so nothing reaches the contact after the erase. */
export async function cancelWaitingSends(db: Queryable, accountId: string, contactId: string, now: number): Promise<number> {
  const result = await writeOn(db, (q) =>
    q
      .updateTable('sends')
      .set({ status: 'cancelled', lease_until: null, updated_at: now })
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .where('status', 'in', TERMINAL_LATER)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}

/**
 * The contact's sends stay, counted by the statistics, with nothing that names the contact:
 * no contact id, address (nor a test send's), trigger data or failure text. Their dates and states are untouched
 * (the daily statistics are dated by them).
 */
export async function anonymizeSends(db: Queryable, accountId: string, contactId: string): Promise<number> {
  const result = await writeOn(db, (q) =>
    q
      .updateTable('sends')
      .set({ contact_id: ERASED_CONTACT_ID, to_address: null, test_to: null, trigger_data: null, reason: null })
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}

/** Opens, clicks and unsubscribes stay counted, no longer tied to the contact. */
export async function anonymizeEngagements(db: Queryable, accountId: string, contactId: string): Promise<void> {
  await writeOn(db, (q) =>
    q
      .updateTable('engagements')
      .set({ contact_id: ERASED_CONTACT_ID })
      .where('account_id', '=', accountId)
      .where('contact_id', '=', contactId)
      .execute(),
  );
}

/** The contact's own rows, children first, the contact last; the events' count is answered. */
export async function deleteContactRows(db: Queryable, accountId: string, contactId: string): Promise<{ events: number }> {
  return writeOn(db, async (q) => {
    const events = await q.deleteFrom('events').where('account_id', '=', accountId).where('contact_id', '=', contactId).executeTakeFirst();
    for (const table of [
      'contact_notes',
      'trackers',
      'contact_tags',
      'contact_field_values',
      'contact_kpis',
      'contact_emails',
      'contact_phones',
    ] as const) {
      await q.deleteFrom(table).where('account_id', '=', accountId).where('contact_id', '=', contactId).execute();
    }
    await q.deleteFrom('contacts').where('account_id', '=', accountId).where('id', '=', contactId).execute();
    return { events: Number(events.numDeletedRows) };
  });
}
