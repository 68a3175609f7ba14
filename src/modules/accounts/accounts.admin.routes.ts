import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AccountBody, AccountPatchBody } from '../../contract/admin/account.js';
import type { AppDeps } from '../../deps.js';
import { accountView, updateAccount } from './accounts.service.js';

/** The account page of the admin API: anyone reads it, administrators change the WhatsApp settings and the unsubscribe page. */
export const accountAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db, config } = deps;

    app.get('/account', { schema: { hide: true, response: { 200: AccountBody } } }, async (request) =>
      accountView(db, request.admin.accountId),
    );

    app.patch(
      '/account',
      { config: { adminOnly: true }, schema: { hide: true, body: AccountPatchBody, response: { 200: AccountBody } } },
      async (request) => {
        const { whatsapp, unsubscribePage } = request.body;
        await updateAccount(db, config, request.admin.accountId, { whatsapp, unsubscribePage });
        return accountView(db, request.admin.accountId);
      },
    );
  };
