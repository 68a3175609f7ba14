import type { Queryable } from '../db/queryable.js';
import { kyselyOf, writeOn } from '../db/queryable.js';
import type { OutboxMessagesTable } from '../db/schema.js';

/** Keeps one rendered message in the outbox. */
export async function insertOutboxMessage(
  db: Queryable,
  accountId: string,
  message: Omit<OutboxMessagesTable, 'account_id'>,
): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('outbox_messages')
      .values({ ...message, account_id: accountId })
      .execute(),
  );
}

/** The account's outbox rows, newest first; optionally one campaign's only. */
export async function selectOutboxMessages(
  db: Queryable,
  accountId: string,
  options: { campaignId?: string; limit: number },
): Promise<OutboxMessagesTable[]> {
  let query = kyselyOf(db).selectFrom('outbox_messages').selectAll().where('account_id', '=', accountId);
  if (options.campaignId !== undefined) query = query.where('campaign_id', '=', options.campaignId);
  // The id makes the order stable; within one millisecond it is arbitrary (ulid is not monotonic).
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
}
