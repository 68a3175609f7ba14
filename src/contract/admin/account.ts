import { type Static, Type } from 'typebox';
import { Nullable, OneOf } from '../common.js';
import { PLANS } from '../constants.js';

/** The account page of the admin API (docs/admin-api.md, Account). */

export const PlanSchema = OneOf(PLANS);
export type { Plan } from '../constants.js';

const PAGE_MEMBERS = ['lang', 'confirmTitle', 'confirmBody', 'confirmButton', 'doneTitle', 'doneBody', 'testBody'] as const;

/**
 * The recipients' unsubscribe page of the account: `lang` (the page's language tag) and its
 * texts, as shown (the English defaults where the account changed nothing).
 */
export const UnsubscribePage = Type.Object(
  Object.fromEntries(PAGE_MEMBERS.map((k) => [k, Type.String()])) as Record<(typeof PAGE_MEMBERS)[number], ReturnType<typeof Type.String>>,
  { title: 'UnsubscribePage' },
);
export type UnsubscribePage = Static<typeof UnsubscribePage>;

/** A change of the page: the members given change; null or '' go back to the default. */
export const UnsubscribePagePatch = Type.Object(
  Object.fromEntries(PAGE_MEMBERS.map((k) => [k, Type.Optional(Nullable(Type.String({ maxLength: 2000 })))])) as Record<
    (typeof PAGE_MEMBERS)[number],
    ReturnType<typeof Type.Optional<ReturnType<typeof Nullable<ReturnType<typeof Type.String>>>>>
  >,
  { additionalProperties: false, title: 'UnsubscribePagePatch' },
);

/** `GET /account` and the answer of `PATCH /account`: never the WhatsApp token nor app secret. */
export const AccountBody = Type.Object({
  id: Type.String(),
  name: Type.String(),
  plan: PlanSchema,
  allowance: Nullable(Type.Integer()),
  usedThisMonth: Type.Integer(),
  whatsapp: Type.Object({ configured: Type.Boolean(), phoneNumberId: Nullable(Type.String()) }),
  unsubscribePage: UnsubscribePage,
});
export type Account = Static<typeof AccountBody>;

/** `PATCH /account` (administrators): the WhatsApp Cloud API settings, the unsubscribe page; either or both. */
export const AccountPatchBody = Type.Object(
  {
    unsubscribePage: Type.Optional(UnsubscribePagePatch),
    whatsapp: Type.Optional(
      Type.Object(
        {
          phoneNumberId: Type.String({ minLength: 1, maxLength: 255 }),
          token: Type.String({ minLength: 1, maxLength: 4096 }),
          appSecret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type AccountPatch = Static<typeof AccountPatchBody>;
