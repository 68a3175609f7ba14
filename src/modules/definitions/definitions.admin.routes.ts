import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CustomFieldBody, CustomFieldItem, CustomFieldList, KpiBody, KpiItem, KpiList } from '../../contract/admin/definitions.js';
import type { AppDeps } from '../../deps.js';
import { createField, createKpi, listFields, listKpis } from './definitions.service.js';

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

    app.get('/kpis', { schema: { hide: true, response: { 200: KpiList } } }, async (request) => ({
      items: await listKpis(db, request.admin.accountId),
    }));
    app.post('/kpis', { schema: { hide: true, body: KpiBody, response: { 200: KpiItem } } }, async (request) =>
      createKpi(db, request.admin.accountId, request.body),
    );
  };
