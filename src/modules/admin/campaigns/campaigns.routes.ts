import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppDeps } from '../../../deps.js';
import { presentCampaign, type Campaign } from '../../campaigns/campaign.js';
import { campaignStats, createCampaign, getCampaign, listCampaigns, updateCampaign, type CampaignInput, type CampaignUpdate } from '../../campaigns/campaigns.service.js';
import { campaignDailyStats, MAX_STATS_DAYS } from '../../campaigns/daily-stats.js';
import { listWebhookDeliveries } from '../../../webhooks/list.js';
import { wholeQuery } from '../../../http/query.js';
import { CampaignCreate, CampaignPatch, ContactIdBody, LimitQuery, PreviewBody, StatsQuery } from './campaigns.schemas.js';
import { previewCampaign } from '../../campaigns/campaign-preview.js';
import { testSend } from '../../campaigns/campaign-test-send.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });

/** The Campaign of docs/admin-api.md: the CLI's JSON without the account id (the session names the account). */
function present(campaign: Campaign) {
  const { accountId: _account, ...rest } = presentCampaign(campaign);
  return rest;
}

export const campaignRoutes = (deps: AppDeps): FastifyPluginAsyncTypebox => async (app) => {
  const { db, config } = deps;

  app.get('/campaigns', { schema: { hide: true } }, async (request) => ({ items: (await listCampaigns(db, request.admin.accountId)).map(present) }));
  app.get('/campaigns/:id', { schema: { hide: true, params: IdParams } }, async (request) => present(await getCampaign(db, request.admin.accountId, request.params.id)));
  // The schemas take enumerations as strings; the settings' checks refuse wrong values (see campaigns.schemas.ts).
  app.post('/campaigns', { schema: { hide: true, body: CampaignCreate } }, async (request) =>
    createCampaign(db, config, request.admin.accountId, request.body as CampaignInput),
  );
  app.patch('/campaigns/:id', { schema: { hide: true, params: IdParams, body: CampaignPatch } }, async (request) => {
    await updateCampaign(db, config, request.admin.accountId, request.params.id, request.body as CampaignUpdate);
    return present(await getCampaign(db, request.admin.accountId, request.params.id));
  });

  app.get('/campaigns/:id/stats', { schema: { hide: true, params: IdParams, querystring: StatsQuery } }, async (request) => {
    const { accountId } = request.admin;
    const days = wholeQuery(request.query.days, 'days', 1, MAX_STATS_DAYS, 30);
    // campaignStats answers 404 first for an unknown campaign.
    const totals = await campaignStats(db, accountId, request.params.id);
    return { totals, days: await campaignDailyStats(db, accountId, request.params.id, days) };
  });

  app.post('/campaigns/:id/preview', { schema: { hide: true, params: IdParams, body: PreviewBody } }, async (request) =>
    previewCampaign(db, config, request.admin.accountId, request.params.id, request.body as { contactId: string; campaign?: CampaignUpdate }),
  );
  app.post('/campaigns/:id/test-send', { schema: { hide: true, params: IdParams, body: ContactIdBody } }, async (request) =>
    testSend(deps, request.admin.accountId, request.params.id, request.body.contactId),
  );

  app.get('/campaigns/:id/webhook-deliveries', { schema: { hide: true, params: IdParams, querystring: LimitQuery } }, async (request) => {
    const deliveries = await listWebhookDeliveries(db, request.admin.accountId, request.params.id, { limit: wholeQuery(request.query.limit, 'limit', 1, 1000, 100) });
    // docs/admin-api.md names each attempt's time `at`.
    return {
      items: deliveries.map(({ attempts, ...delivery }) => ({
        ...delivery,
        attempts: attempts.map((a) => ({ at: a.attemptedAt, statusCode: a.statusCode, error: a.error, durationMs: a.durationMs })),
      })),
    };
  });
};
