import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { EngagementsTable } from '../../db/schema.js';
import { newId } from '../../ids.js';

/** The send an engagement belongs to, with what the engagement row repeats of it. */
export interface EngagedSend {
  id: string;
  accountId: string;
  campaignId: string;
  contactId: string;
  /** A test send from the admin panel (migration 0004): delivered, but outside the statistics. */
  test: boolean;
}

/**
 * The send a signed tracking token names. The one look-up here without an account id: the
 * token (signed by us) is the authority, and the send row says which account it belongs to.
 */
export async function findSendById(db: Queryable, sendId: string): Promise<EngagedSend | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('sends')
    .select(['id', 'account_id', 'campaign_id', 'contact_id', 'test'])
    .where('id', '=', sendId)
    .executeTakeFirst();
  return row && { id: row.id, accountId: row.account_id, campaignId: row.campaign_id, contactId: row.contact_id, test: row.test === 1 };
}

export async function insertEngagement(
  db: Queryable,
  send: EngagedSend,
  kind: EngagementsTable['kind'],
  url: string | null,
  at: number,
): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('engagements')
      .values({
        id: newId('eng'),
        account_id: send.accountId,
        campaign_id: send.campaignId,
        send_id: send.id,
        contact_id: send.contactId,
        kind,
        url,
        created_at: at,
      })
      .execute(),
  );
}

/** Whether the send already has an engagement of this kind (a WhatsApp read counts once). */
export async function hasEngagement(db: Queryable, send: EngagedSend, kind: EngagementsTable['kind']): Promise<boolean> {
  const row = await kyselyOf(db)
    .selectFrom('engagements')
    .select('id')
    // campaign_id first: the engagements_campaign_kind index covers (campaign_id, kind, send_id).
    .where('campaign_id', '=', send.campaignId)
    .where('kind', '=', kind)
    .where('send_id', '=', send.id)
    .where('account_id', '=', send.accountId)
    .executeTakeFirst();
  return row !== undefined;
}
