import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { IdempotencyHeaders } from '../../http/openapi.js';
import { type DeclaredError, documented, IDEMPOTENCY_ERRORS, JSON_BODY_ERRORS, KEY_ERRORS } from '../../http/operation-docs.js';
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
const LEAD_ID = 'ld_01jdb3v7k2m9q4x8r5t6w1y3z0';
const CAMPAIGN_ID = 'cmp_01jdb3t5a7b9c1d3e5f7g9h1j3';

const TRIGGERED = {
  schema: TriggerResponse,
  description: "The trigger was taken: the send it created (or restarted) and the recipient's result.",
  examples: {
    queued: {
      summary: 'Immediate campaign: the message is queued',
      value: { campaignId: CAMPAIGN_ID, leadId: LEAD_ID, mode: 'immediate', sendId: 'snd_01jdb3x9p1q3r5s7t9v1w3x5y7', status: 'queued' },
    },
    pending: {
      summary: 'Delay campaign: the send waits for its delay',
      value: { campaignId: CAMPAIGN_ID, leadId: LEAD_ID, mode: 'delay', sendId: 'snd_01jdb3x9p1q3r5s7t9v1w3x5y7', status: 'pending' },
    },
    optout: {
      summary: 'The contact opted out of the channel',
      value: { campaignId: CAMPAIGN_ID, leadId: LEAD_ID, mode: 'immediate', sendId: 'snd_01jdb3x9p1q3r5s7t9v1w3x5y7', status: 'optout' },
    },
  },
};

const CANCELLED = {
  schema: CancelResponse,
  description: 'Whether a pending delayed send was cancelled (nothing pending is no error).',
  examples: {
    cancelled: { summary: 'A pending send was cancelled', value: { cancelled: true, campaignId: CAMPAIGN_ID, leadId: LEAD_ID } },
    nothingPending: { summary: 'Nothing was pending', value: { cancelled: false, campaignId: CAMPAIGN_ID, leadId: LEAD_ID } },
  },
};

/** The campaign checks of decisions.md (order of checks, 6), then the contact (7). */
const CAMPAIGN_ERRORS: DeclaredError[] = ['CAMPAIGN_NOT_FOUND', 'CAMPAIGN_NOT_API', 'CAMPAIGN_NOT_ACTIVE', 'LEAD_NOT_FOUND'];
const MISSING_CAMPAIGN: DeclaredError = { code: 'VALIDATION', details: [{ path: '/campaignId', message: 'is required' }] };

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

    app.post(
      '/api/campaigns/trigger',
      {
        config: { scope: 'campaigns:trigger', idempotent: true },
        preValidation: objectLeadNeedsLeadsWrite,
        schema: {
          ...TRIGGER_DOC,
          headers: IdempotencyHeaders,
          operationId: 'triggerCampaign',
          body: TriggerBody,
          ...documented({
            success: { ...TRIGGERED, headers: ['Idempotent-Replayed'] },
            errors: [
              ...KEY_ERRORS,
              ...JSON_BODY_ERRORS,
              MISSING_CAMPAIGN,
              ...CAMPAIGN_ERRORS,
              'IDENTIFIER_CONFLICT',
              'ALLOWANCE_EXHAUSTED',
              ...IDEMPOTENCY_ERRORS,
            ],
          }),
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
          operationId: 'triggerCampaignByGet',
          summary: `${TRIGGER_DOC.summary} (GET form)`,
          querystring: TriggerQuery,
          ...documented({
            success: TRIGGERED,
            errors: [...KEY_ERRORS, 'VALIDATION', MISSING_CAMPAIGN, ...CAMPAIGN_ERRORS, 'ALLOWANCE_EXHAUSTED'],
          }),
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
          operationId: 'cancelSend',
          body: CancelBody,
          ...documented({
            success: { ...CANCELLED, headers: ['Idempotent-Replayed'] },
            errors: [
              ...KEY_ERRORS,
              ...JSON_BODY_ERRORS,
              MISSING_CAMPAIGN,
              'CAMPAIGN_NOT_FOUND',
              'CAMPAIGN_NOT_API',
              'LEAD_NOT_FOUND',
              ...IDEMPOTENCY_ERRORS,
            ],
          }),
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
          operationId: 'cancelSendByGet',
          summary: `${CANCEL_DOC.summary} (GET form)`,
          querystring: CancelQuery,
          ...documented({
            success: CANCELLED,
            errors: [...KEY_ERRORS, 'VALIDATION', MISSING_CAMPAIGN, 'CAMPAIGN_NOT_FOUND', 'CAMPAIGN_NOT_API', 'LEAD_NOT_FOUND'],
          }),
        },
      },
      async (request) => cancelSend(deps.db, request.apiKey.accountId, { campaignId: request.query.campaignId, lead: request.query.lead }),
    );
  };
