import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { errorResponses, IdempotencyHeaders } from '../../http/openapi.js';
import { missingScope } from '../keys/keys.service.js';
import { cancelSend } from './cancel.service.js';
import { CancelBody, CancelQuery, CancelResponse, TriggerBody, TriggerQuery, TriggerResponse } from './sends.schemas.js';
import { triggerCampaign } from './trigger.service.js';

const TRIGGER_DOC = {
  tags: ['campaigns'],
  summary: 'Trigger an API-triggered campaign for one contact',
  description:
    'Sends the campaign to the contact now (Immediate) or after its delay (Delay; a second trigger restarts the timer of the ' +
    'pending send). `status` is the recipient result: queued, pending, rejected (already received, re-entry off or cooling ' +
    'down), optout, or error (no address for the channel). 402 when the monthly allowance is used up. Scope campaigns:trigger ' +
    '(and leads:write when `lead` is an object). POST only: `data`, per-send data kept with the send (`{{ trigger.* }}` in ' +
    "templates, `data.trigger` in webhooks); a restart of a pending send takes the latest call's data.",
};
const CANCEL_DOC = {
  tags: ['campaigns'],
  summary: 'Cancel a pending delayed send',
  description:
    '`cancelled` is true when a pending send was cancelled, false when nothing was pending (not an error). Scope campaigns:trigger.',
};

/** Decisions.md check 3: an object `lead` needs leads:write, refused before its contents are looked at. */
async function objectLeadNeedsLeadsWrite(request: FastifyRequest): Promise<void> {
  const lead = (request.body as { lead?: unknown } | undefined)?.lead;
  if (typeof lead === 'object' && lead !== null && !request.apiKey.scopes.includes('leads:write'))
    throw missingScope('leads:write', '/lead');
}

export const sendRoutes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const sendDeps = { db: deps.db, wakeup: deps.wakeup };
    const triggerErrors = errorResponses(400, 401, 402, 403, 404, 409, 413, 415, 429);

    app.post(
      '/api/campaigns/trigger',
      {
        config: { scope: 'campaigns:trigger', idempotent: true },
        preValidation: objectLeadNeedsLeadsWrite,
        schema: {
          ...TRIGGER_DOC,
          headers: IdempotencyHeaders,
          body: TriggerBody,
          response: { 200: TriggerResponse, ...triggerErrors, ...errorResponses(422) },
        },
      },
      async (request) => triggerCampaign(sendDeps, request.apiKey.accountId, request.body, Date.now(), request.idempotency),
    );

    app.get(
      '/api/campaigns/trigger',
      {
        config: { scope: 'campaigns:trigger' },
        schema: {
          ...TRIGGER_DOC,
          summary: `${TRIGGER_DOC.summary} (GET form)`,
          querystring: TriggerQuery,
          response: { 200: TriggerResponse, ...triggerErrors },
        },
      },
      async (request) =>
        triggerCampaign(sendDeps, request.apiKey.accountId, { campaignId: request.query.campaignId, lead: request.query.lead }),
    );

    app.post(
      '/api/campaigns/cancel',
      {
        config: { scope: 'campaigns:trigger', idempotent: true },
        schema: {
          ...CANCEL_DOC,
          headers: IdempotencyHeaders,
          body: CancelBody,
          response: { 200: CancelResponse, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
        },
      },
      async (request) => cancelSend(deps.db, request.apiKey.accountId, request.body, Date.now(), request.idempotency),
    );

    app.get(
      '/api/campaigns/cancel',
      {
        config: { scope: 'campaigns:trigger' },
        schema: {
          ...CANCEL_DOC,
          summary: `${CANCEL_DOC.summary} (GET form)`,
          querystring: CancelQuery,
          response: { 200: CancelResponse, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => cancelSend(deps.db, request.apiKey.accountId, { campaignId: request.query.campaignId, lead: request.query.lead }),
    );
  };
