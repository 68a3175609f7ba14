import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppDeps } from '../../deps.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { AppError } from '../../errors.js';
import { outboxMessageView, type OutboxItem } from '../../rendering/outbox-view.js';
import { iso } from '../../time.js';
import { decodeCursor, DEFAULT_PAGE, MAX_PAGE, pageOf } from '../../http/paging.js';
import { QueryNumber, wholeQuery } from '../../http/query.js';

/**
 * The built-in outbox in the panel: a keyset-paged list (listOutbox of the channel has no
 * cursor, and the list leaves out the bodies), and one message in full.
 */
export async function pageOutbox(db: Db, accountId: string, options: { campaignId?: string; limit: number; cursor?: string }) {
  const after = decodeCursor(options.cursor);
  let query = db.kysely
    .selectFrom('outbox_messages')
    .select(['id', 'send_id', 'campaign_id', 'channel', 'to_address', 'from_address', 'subject', 'created_at'])
    .where('account_id', '=', accountId);
  if (options.campaignId !== undefined) query = query.where('campaign_id', '=', options.campaignId);
  if (after) query = query.where((eb) => eb.or([eb('created_at', '<', after.at), eb.and([eb('created_at', '=', after.at), eb('id', '<', after.id)])]));
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit + 1).execute();
  const { items, nextCursor } = pageOf(rows, options.limit, (r) => ({ at: Number(r.created_at), id: r.id }));
  return {
    items: items.map((r) => ({ id: r.id, sendId: r.send_id, campaignId: r.campaign_id, channel: r.channel, to: r.to_address, from: r.from_address, subject: r.subject, createdAt: iso(Number(r.created_at)) })),
    nextCursor,
  };
}

/**
 * One outbox message with its bodies, headers and WhatsApp payload, as the panel shows it; another
 * account's id is 404. The HTML is untracked (no open pixel, original links): looking at a sent
 * message in the panel must never count an open or a click (decisions.md, Admin panel).
 */
export async function getOutboxMessage(db: Db, config: Pick<Config, 'publicUrl' | 'secret'>, accountId: string, id: string): Promise<OutboxItem> {
  const row = await db.kysely.selectFrom('outbox_messages').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new AppError('OUTBOX_MESSAGE_NOT_FOUND');
  return outboxMessageView(row, config);
}

const ListQuery = Type.Object(
  { campaignId: Type.Optional(Type.String({ maxLength: 255 })), limit: Type.Optional(QueryNumber), cursor: Type.Optional(Type.String({ maxLength: 1024 })) },
  { additionalProperties: false },
);

export const outboxRoutes = (deps: AppDeps): FastifyPluginAsyncTypebox => async (app) => {
  app.get('/outbox', { schema: { hide: true, querystring: ListQuery } }, async (request) =>
    pageOutbox(deps.db, request.admin.accountId, {
      campaignId: request.query.campaignId || undefined,
      limit: wholeQuery(request.query.limit, 'limit', 1, MAX_PAGE, DEFAULT_PAGE),
      cursor: request.query.cursor,
    }),
  );
  app.get('/outbox/:id', { schema: { hide: true, params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }) } }, async (request) =>
    getOutboxMessage(deps.db, deps.config, request.admin.accountId, request.params.id),
  );
};
