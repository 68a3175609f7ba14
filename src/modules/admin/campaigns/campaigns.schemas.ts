import { Type, type Static } from 'typebox';
import { QueryNumber } from '../../../http/query.js';

/**
 * The campaign members of docs/admin-api.md, with their JSON types. Enumerations are plain
 * strings here: the campaign settings' own checks refuse a wrong value with a message that
 * names the choices, the same one the CLI gives.
 */
const Text = Type.Union([Type.String(), Type.Null()]);
const members = {
  name: Type.String(),
  channel: Type.String(),
  schedule: Type.String(),
  mode: Type.String(),
  delaySeconds: Type.Integer(),
  reentry: Type.Boolean(),
  cooldownDays: Type.Integer(),
  active: Type.Boolean(),
  from: Text,
  subject: Text,
  html: Text,
  text: Text,
  whatsappTemplate: Text,
  language: Text,
  whatsappParams: Type.Array(Type.String()),
  webhooks: Type.Array(Type.String()),
};
const optional = Object.fromEntries(Object.entries(members).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof members]: ReturnType<typeof Type.Optional<(typeof members)[K]>>;
};

export const CampaignCreate = Type.Object({ ...optional, name: members.name, channel: members.channel }, { additionalProperties: false });
export const CampaignPatch = Type.Object(optional, { additionalProperties: false });
export type CampaignPatchInput = Static<typeof CampaignPatch>;

export const ContactIdBody = Type.Object({ contactId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
export const PreviewBody = Type.Object({ contactId: Type.String({ minLength: 1, maxLength: 255 }), campaign: Type.Optional(CampaignPatch) }, { additionalProperties: false });

export const StatsQuery = Type.Object({ days: Type.Optional(QueryNumber) }, { additionalProperties: false });
export const LimitQuery = Type.Object({ limit: Type.Optional(QueryNumber) }, { additionalProperties: false });
