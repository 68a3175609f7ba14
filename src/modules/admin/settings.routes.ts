import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { updateAccount } from '../accounts/accounts.service.js';
import { createField, createKpi, listFields, listKpis } from '../definitions/definitions.service.js';
import { createKey, deleteKey, listKeys, revealKey, updateKey } from '../keys/keys.service.js';
import { createUser } from '../users/users.service.js';
import { parseInstant } from '../../http/paging.js';
import { accountView, deleteUser, listUsers, presentKey } from './settings.service.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });
const Expires = Type.Union([Type.String(), Type.Null()]);

const AccountPatch = Type.Object(
  {
    whatsapp: Type.Object(
      { phoneNumberId: Type.String({ minLength: 1, maxLength: 255 }), token: Type.String({ minLength: 1, maxLength: 4096 }), appSecret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
const UserBody = Type.Object(
  { email: Type.String({ maxLength: 255 }), password: Type.String({ maxLength: 1024 }), role: Type.Union([Type.Literal('admin'), Type.Literal('member')]) },
  { additionalProperties: false },
);
const KeyBody = Type.Object(
  { name: Type.String(), scopes: Type.Array(Type.String()), active: Type.Optional(Type.Boolean()), expiresAt: Type.Optional(Expires) },
  { additionalProperties: false },
);
const KeyPatch = Type.Object(
  { name: Type.Optional(Type.String()), scopes: Type.Optional(Type.Array(Type.String())), active: Type.Optional(Type.Boolean()), expiresAt: Type.Optional(Expires) },
  { additionalProperties: false },
);
const FieldBody = Type.Object({ name: Type.String(), type: Type.String() }, { additionalProperties: false });
const KpiBody = Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false });

const expiresAt = (value: string | null | undefined) => (value === undefined || value === null ? value : parseInstant(value, '/expiresAt'));

/** Account, users, API keys (administrators only), custom fields and KPIs: thin calls into their services. */
export const settingsRoutes = (deps: AppDeps): FastifyPluginAsyncTypebox => async (app) => {
  const { db, config } = deps;
  const admin = { adminOnly: true };

  app.get('/account', { schema: { hide: true } }, async (request) => accountView(db, request.admin.accountId));
  app.patch('/account', { config: admin, schema: { hide: true, body: AccountPatch } }, async (request) => {
    await updateAccount(db, config, request.admin.accountId, { whatsapp: request.body.whatsapp });
    return accountView(db, request.admin.accountId);
  });

  app.get('/users', { config: admin, schema: { hide: true } }, async (request) => listUsers(db, request.admin.accountId));
  app.post('/users', { config: admin, schema: { hide: true, body: UserBody } }, async (request) => createUser(db, request.admin.accountId, request.body));
  app.delete('/users/:id', { config: admin, schema: { hide: true, params: IdParams } }, async (request, reply) => {
    await deleteUser(db, request.admin.accountId, request.params.id, request.admin.userId);
    return reply.code(204).send();
  });

  const findKey = async (accountId: string, keyId: string) => {
    const key = (await listKeys(db, accountId)).find((k) => k.id === keyId);
    if (!key) throw new AppError('KEY_NOT_FOUND');
    return presentKey(key);
  };
  app.get('/keys', { config: admin, schema: { hide: true } }, async (request) => ({
    items: (await listKeys(db, request.admin.accountId)).map((key) => presentKey(key)),
  }));
  app.post('/keys', { config: admin, schema: { hide: true, body: KeyBody } }, async (request) => {
    const { body } = request;
    const created = await createKey(db, config, request.admin.accountId, { ...body, expiresAt: expiresAt(body.expiresAt) });
    return { ...(await findKey(request.admin.accountId, created.id)), key: created.key };
  });
  app.get('/keys/:id/value', { config: admin, schema: { hide: true, params: IdParams } }, async (request) => ({
    key: await revealKey(db, config, request.admin.accountId, request.params.id),
  }));
  app.patch('/keys/:id', { config: admin, schema: { hide: true, params: IdParams, body: KeyPatch } }, async (request) => {
    await updateKey(db, request.admin.accountId, request.params.id, { ...request.body, expiresAt: expiresAt(request.body.expiresAt) });
    return findKey(request.admin.accountId, request.params.id);
  });
  app.delete('/keys/:id', { config: admin, schema: { hide: true, params: IdParams } }, async (request, reply) => {
    await deleteKey(db, request.admin.accountId, request.params.id);
    return reply.code(204).send();
  });

  app.get('/fields', { schema: { hide: true } }, async (request) => ({ items: await listFields(db, request.admin.accountId) }));
  app.post('/fields', { schema: { hide: true, body: FieldBody } }, async (request) => createField(db, request.admin.accountId, request.body));
  app.get('/kpis', { schema: { hide: true } }, async (request) => ({ items: await listKpis(db, request.admin.accountId) }));
  app.post('/kpis', { schema: { hide: true, body: KpiBody } }, async (request) => createKpi(db, request.admin.accountId, request.body));
};
