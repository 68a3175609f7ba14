import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { KeyBody, KeyCreated, KeyItem, KeyList, KeyPatch, KeyValue } from '../../contract/admin/keys.js';
import { IdParams, NoContent } from '../../contract/common.js';
import type { AppDeps } from '../../deps.js';
import { parseInstant } from '../../http/paging.js';
import { createKey, deleteKey, getKeyItem, listKeys, presentKey, revealKey, updateKey } from './keys.service.js';

const expiresAt = (value: string | null | undefined) => (value === undefined || value === null ? value : parseInstant(value, '/expiresAt'));

/** The account's API keys in the admin API (administrators only): thin calls into the keys service. */
export const keyAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db, config } = deps;
    const admin = { adminOnly: true };

    app.get('/keys', { config: admin, schema: { hide: true, response: { 200: KeyList } } }, async (request) => ({
      items: (await listKeys(db, request.admin.accountId)).map((key) => presentKey(key)),
    }));

    app.post('/keys', { config: admin, schema: { hide: true, body: KeyBody, response: { 200: KeyCreated } } }, async (request) => {
      const { body } = request;
      const created = await createKey(db, config, request.admin.accountId, { ...body, expiresAt: expiresAt(body.expiresAt) });
      return { ...(await getKeyItem(db, request.admin.accountId, created.id)), key: created.key };
    });

    app.get(
      '/keys/:id/value',
      { config: admin, schema: { hide: true, params: IdParams, response: { 200: KeyValue } } },
      async (request) => ({
        key: await revealKey(db, config, request.admin.accountId, request.params.id),
      }),
    );

    app.patch(
      '/keys/:id',
      { config: admin, schema: { hide: true, params: IdParams, body: KeyPatch, response: { 200: KeyItem } } },
      async (request) => {
        await updateKey(db, request.admin.accountId, request.params.id, { ...request.body, expiresAt: expiresAt(request.body.expiresAt) });
        return getKeyItem(db, request.admin.accountId, request.params.id);
      },
    );

    app.delete(
      '/keys/:id',
      { config: admin, schema: { hide: true, params: IdParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await deleteKey(db, request.admin.accountId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
