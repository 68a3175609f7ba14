import { kyselyOf, type Queryable } from '../../db/queryable.js';
import type { OutboxMessagesTable } from '../../db/schema.js';
import type { Position } from '../../http/paging.js';

/** SQL of the outbox as the admin panel reads it; the account id is part of every WHERE. */

/** One keyset page of the account's outbox, newest first, without the bodies; `limit + 1` rows. */
export async function selectOutboxPage(
  db: Queryable,
  accountId: string,
  options: { campaignId?: string; limit: number; after?: Position },
) {
  const { after } = options;
  let query = kyselyOf(db)
    .selectFrom('outbox_messages')
    .select(['id', 'send_id', 'campaign_id', 'channel', 'to_address', 'from_address', 'subject', 'created_at'])
    .where('account_id', '=', accountId);
  if (options.campaignId !== undefined) query = query.where('campaign_id', '=', options.campaignId);
  if (after)
    query = query.where((eb) =>
      eb.or([eb('created_at', '<', after.at), eb.and([eb('created_at', '=', after.at), eb('id', '<', after.id)])]),
    );
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit + 1)
    .execute();
}

export async function selectOutboxMessage(db: Queryable, accountId: string, id: string): Promise<OutboxMessagesTable | undefined> {
  return kyselyOf(db).selectFrom('outbox_messages').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}
