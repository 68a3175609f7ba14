import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  Campaign,
  CampaignCreateBody,
  CampaignCreated,
  CampaignDeleted,
  CampaignDuplicated,
  CampaignList,
  CampaignParams,
  CampaignPatchBody,
  CampaignPreview,
  CampaignStats,
  CampaignStatsQuery,
  PreviewBody,
  TestSendBody,
  TestSendQueued,
  WebhookDeliveriesQuery,
  WebhookDeliveryList,
} from '../../contract/admin/campaigns.js';
import type { AppDeps } from '../../deps.js';
import { wholeQuery } from '../../http/query.js';
import { listWebhookDeliveries, MAX_LIST_LIMIT } from '../../webhooks/list.js';
import { presentCampaign, type Campaign as StoredCampaign } from './campaign.js';
import { previewCampaign } from './campaign-preview.js';
import { testSend } from './campaign-test-send.js';
import {
  campaignLinkClicks,
  campaignStats,
  createCampaign,
  deleteCampaign,
  duplicateCampaign,
  getCampaign,
  listCampaigns,
  updateCampaign,
} from './campaigns.service.js';
import { campaignDailyStats, MAX_STATS_DAYS } from './daily-stats.js';

/** The Campaign of docs/admin-api.md: the CLI's JSON without the account id (the session names the account). */
function present(campaign: StoredCampaign): Campaign {
  const { accountId: _account, ...rest } = presentCampaign(campaign);
  return rest;
}

/** docs/admin-api.md, Campaigns: settings, statistics, preview, test send and the webhook delivery log. */
export const campaignAdminRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db, config } = deps;

    app.get('/campaigns', { schema: { hide: true, response: { 200: CampaignList } } }, async (request) => ({
      items: (await listCampaigns(db, request.admin.accountId)).map(present),
    }));
    app.get('/campaigns/:id', { schema: { hide: true, params: CampaignParams, response: { 200: Campaign } } }, async (request) =>
      present(await getCampaign(db, request.admin.accountId, request.params.id)),
    );
    app.post('/campaigns', { schema: { hide: true, body: CampaignCreateBody, response: { 200: CampaignCreated } } }, async (request) =>
      createCampaign(db, config, request.admin.accountId, request.body),
    );
    app.patch(
      '/campaigns/:id',
      { schema: { hide: true, params: CampaignParams, body: CampaignPatchBody, response: { 200: Campaign } } },
      async (request) => {
        await updateCampaign(db, config, request.admin.accountId, request.params.id, request.body);
        return present(await getCampaign(db, request.admin.accountId, request.params.id));
      },
    );
    app.delete(
      '/campaigns/:id',
      { schema: { hide: true, params: CampaignParams, response: { 204: CampaignDeleted } } },
      async (request, reply) => {
        await deleteCampaign(db, request.admin.accountId, request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/campaigns/:id/duplicate',
      { schema: { hide: true, params: CampaignParams, response: { 200: CampaignDuplicated } } },
      async (request) => {
        const copy = await duplicateCampaign(db, config, request.admin.accountId, request.params.id);
        return { ...present(copy.campaign), webhookSecret: copy.webhookSecret };
      },
    );

    app.get(
      '/campaigns/:id/stats',
      { schema: { hide: true, params: CampaignParams, querystring: CampaignStatsQuery, response: { 200: CampaignStats } } },
      async (request) => {
        const { accountId } = request.admin;
        const days = wholeQuery(request.query.days, 'days', 1, MAX_STATS_DAYS, 30);
        // campaignStats answers 404 first for an unknown campaign.
        const totals = await campaignStats(db, accountId, request.params.id);
        const [daily, links] = await Promise.all([
          campaignDailyStats(db, accountId, request.params.id, days),
          campaignLinkClicks(db, accountId, request.params.id),
        ]);
        return { totals, days: daily, links };
      },
    );

    app.post(
      '/campaigns/:id/preview',
      { schema: { hide: true, params: CampaignParams, body: PreviewBody, response: { 200: CampaignPreview } } },
      async (request) => previewCampaign(db, config, request.admin.accountId, request.params.id, request.body),
    );
    app.post(
      '/campaigns/:id/test-send',
      { schema: { hide: true, params: CampaignParams, body: TestSendBody, response: { 200: TestSendQueued } } },
      async (request) => testSend(deps, request.admin.accountId, request.params.id, request.body.contactId, request.body.data),
    );

    app.get(
      '/campaigns/:id/webhook-deliveries',
      { schema: { hide: true, params: CampaignParams, querystring: WebhookDeliveriesQuery, response: { 200: WebhookDeliveryList } } },
      async (request) => {
        const limit = wholeQuery(request.query.limit, 'limit', 1, MAX_LIST_LIMIT, 100);
        const deliveries = await listWebhookDeliveries(db, request.admin.accountId, request.params.id, { limit });
        // docs/admin-api.md names each attempt's time `at`.
        return {
          items: deliveries.map(({ attempts, ...delivery }) => ({
            ...delivery,
            attempts: attempts.map((a) => ({ at: a.attemptedAt, statusCode: a.statusCode, error: a.error, durationMs: a.durationMs })),
          })),
        };
      },
    );
  };
