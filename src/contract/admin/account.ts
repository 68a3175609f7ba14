import { type Static, Type } from 'typebox';
import { Nullable, OneOf } from '../common.js';
import { PLANS } from '../constants.js';

/** The account page of the admin API (docs/admin-api.md, Account). */

export const PlanSchema = OneOf(PLANS);
export type { Plan } from '../constants.js';

/** `GET /account` and the answer of `PATCH /account`: never the WhatsApp token nor app secret. */
export const AccountBody = Type.Object({
  id: Type.String(),
  name: Type.String(),
  plan: PlanSchema,
  allowance: Nullable(Type.Integer()),
  usedThisMonth: Type.Integer(),
  whatsapp: Type.Object({ configured: Type.Boolean(), phoneNumberId: Nullable(Type.String()) }),
});
export type Account = Static<typeof AccountBody>;

/** `PATCH /account` (administrators): the WhatsApp Cloud API settings. */
export const AccountPatchBody = Type.Object(
  {
    whatsapp: Type.Object(
      {
        phoneNumberId: Type.String({ minLength: 1, maxLength: 255 }),
        token: Type.String({ minLength: 1, maxLength: 4096 }),
        appSecret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type AccountPatch = Static<typeof AccountPatchBody>;
