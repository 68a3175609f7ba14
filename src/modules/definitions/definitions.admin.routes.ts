import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CustomFieldBody,
  CustomFieldItem,
  CustomFieldList,
  DefinitionDeleted,
  DefinitionParams,
  KpiBody,
  KpiItem,
  KpiList,
  RenameBody,
} from '../../contract/admin/definitions.js';
import type { AppDeps } from '../../deps.js';
import { createField, createKpi, deleteField, deleteKpi, listFields, listKpis, renameField, renameKpi } from './definitions.service.js';

/** Custom fields and KPIs of the account in the admin API (any signed-in user). */
export const definitionAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db } = deps;

    app.get('/fields', { schema: { hide: true, response: { 200: CustomFieldList } } }, async (request) => ({
      items: await listFields(db, request.admin.accountId),
    }));
    app.post('/fields', { schema: { hide: true, body: CustomFieldBody, response: { 200: CustomFieldItem } } }, async (request) =>
      createField(db, request.admin.accountId, request.body),
    );
    app.patch(
      '/fields/:id',
      { schema: { hide: true, params: DefinitionParams, body: RenameBody, response: { 200: CustomFieldItem } } },
      async (request) => renameField(db, request.admin.accountId, request.params.id, request.body),
    );
    app.delete(
      '/fields/:id',
      { schema: { hide: true, params: DefinitionParams, response: { 204: DefinitionDeleted } } },
      async (request, reply) => {
        await deleteField(db, request.admin.accountId, request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.get('/kpis', { schema: { hide: true, response: { 200: KpiList } } }, async (request) => ({
      items: await listKpis(db, request.admin.accountId),
    }));
    app.post('/kpis', { schema: { hide: true, body: KpiBody, response: { 200: KpiItem } } }, async (request) =>
      createKpi(db, request.admin.accountId, request.body),
    );
    app.patch(
      '/kpis/:id',
      { schema: { hide: true, params: DefinitionParams, body: RenameBody, response: { 200: KpiItem } } },
      async (request) => renameKpi(db, request.admin.accountId, request.params.id, request.body),
    );
    app.delete(
      '/kpis/:id',
      { schema: { hide: true, params: DefinitionParams, response: { 204: DefinitionDeleted } } },
      async (request, reply) => {
        await deleteKpi(db, request.admin.accountId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
