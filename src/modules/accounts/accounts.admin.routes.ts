import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AccountBody, AccountPatchBody } from '../../contract/admin/account.js';
import type { AppDeps } from '../../deps.js';
import { accountView, updateAccount } from './accounts.service.js';

/** The account page of the admin API: anyone reads it, administrators change the WhatsApp settings. */
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
        await updateAccount(db, config, request.admin.accountId, { whatsapp: request.body.whatsapp });
        return accountView(db, request.admin.accountId);
      },
    );
  };
