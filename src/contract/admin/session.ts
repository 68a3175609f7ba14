import { type Static, Type } from 'typebox';
import { PlanSchema } from './account.js';
import { RoleSchema } from './users.js';

/** Sign-in, sign-out and "who am I" of the admin panel (docs/admin-api.md, Sessions). */

export const LoginBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 255 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
export type LoginInput = Static<typeof LoginBody>;

/** The answer of `POST /login` and `GET /session`. */
export const SessionBody = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), role: RoleSchema }),
  account: Type.Object({ id: Type.String(), name: Type.String(), plan: PlanSchema }),
  csrfToken: Type.String(),
});
export type Session = Static<typeof SessionBody>;
