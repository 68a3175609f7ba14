import { type Static, Type } from 'typebox';
import { MAX_JSON_DEPTH } from '../../json-limits.js';
import { LeadBody } from '../contacts/contacts.schemas.js';

const CampaignId = Type.String({ minLength: 1, maxLength: 255, description: 'Id of an activated API-triggered campaign.' });
const LeadString = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'The contact: an email (contains @), a phone (+ and digits, or 7+ digits), else a contact id, then a visitor id.',
});

export const TriggerBody = Type.Object(
  {
    campaignId: CampaignId,
    lead: Type.Union([LeadString, LeadBody], {
      description:
        "A string naming an existing contact, or an object (the contact write's fields) that creates or updates it first; the object needs scope leads:write.",
    }),
    data: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        maxDepth: MAX_JSON_DEPTH,
        description:
          'Per-send data (an order number, a reset link), kept with the send and never written onto the contact: ' +
          '`{{ trigger.* }}` in templates, `data.trigger` in webhooks. 16 KiB at most, 32 levels deep at most. ' +
          'A trigger that restarts a pending delayed send replaces its data (none sent: cleared).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TriggerInput = Static<typeof TriggerBody>;

/** GET forms: tools that can only call an address. Other query parameters are tolerated. */
export const TriggerQuery = Type.Object({
  campaignId: CampaignId,
  lead: LeadString,
  'api-key': Type.Optional(
    Type.String({ description: 'The API key, for tools that can only call an address (the x-service-api-key header wins).' }),
  ),
});

export const CancelBody = Type.Object({ campaignId: CampaignId, lead: LeadString }, { additionalProperties: false });
export type CancelInput = Static<typeof CancelBody>;
export const CancelQuery = TriggerQuery;

export const TriggerResponse = Type.Object({
  campaignId: Type.String(),
  leadId: Type.String(),
  mode: Type.Union([Type.Literal('immediate'), Type.Literal('delay')]),
  sendId: Type.String({ description: 'The send this call created, or the pending one it restarted.' }),
  status: Type.Union(
    [Type.Literal('queued'), Type.Literal('pending'), Type.Literal('rejected'), Type.Literal('optout'), Type.Literal('error')],
    {
      description: 'queued (immediate), pending (delay), or the recipient result: rejected, optout, error.',
    },
  ),
});
export type TriggerResult = Static<typeof TriggerResponse>;

export const CancelResponse = Type.Object({
  cancelled: Type.Boolean({ description: 'true when a pending delayed send was cancelled; false when nothing was pending.' }),
  campaignId: Type.String(),
  leadId: Type.String(),
});
export type CancelResult = Static<typeof CancelResponse>;
