import { type Static, Type } from 'typebox';
import { Instant, OneOf } from '../common.js';
import { USER_ROLES } from '../constants.js';

/** The users of the account (docs/admin-api.md, Users; administrators only). */

export const RoleSchema = OneOf(USER_ROLES);
export type { UserRole as Role } from '../constants.js';

export const UserItem = Type.Object({ id: Type.String(), email: Type.String(), role: RoleSchema, createdAt: Instant });
export type User = Static<typeof UserItem>;

/** `GET /users`: oldest first. */
export const UserList = Type.Object({ items: Type.Array(UserItem) });
export type UserListBody = Static<typeof UserList>;

/** `POST /users`: an administrator invites a user with a first password (the rules are the service's). */
export const UserBody = Type.Object(
  { email: Type.String({ maxLength: 255 }), password: Type.String({ maxLength: 1024 }), role: RoleSchema },
  { additionalProperties: false },
);
export type UserInput = Static<typeof UserBody>;

export const UserCreated = Type.Object({ id: Type.String() });
export type UserCreatedBody = Static<typeof UserCreated>;

/** `PATCH /users/:id`: an administrator changes a user's role. */
export const UserRoleBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });
export type UserRoleInput = Static<typeof UserRoleBody>;

/** `POST /users/:id/password`: an administrator sets a new password for another user. */
export const UserPasswordBody = Type.Object({ password: Type.String({ maxLength: 1024 }) }, { additionalProperties: false });
export type UserPasswordInput = Static<typeof UserPasswordBody>;

/** `POST /profile/password`: the signed-in user changes their own password. */
export const OwnPasswordBody = Type.Object(
  { currentPassword: Type.String({ maxLength: 1024 }), newPassword: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
export type OwnPasswordInput = Static<typeof OwnPasswordBody>;
