import { type Static, Type } from 'typebox';
import { Instant, Nullable, OneOf } from '../common.js';
import { KEY_STATES, SCOPES } from '../constants.js';

/** The API keys of the account (docs/admin-api.md, API keys; administrators only). */

export const ScopeSchema = OneOf(SCOPES);
export const KeyStateSchema = OneOf(KEY_STATES);
export type { KeyState, Scope } from '../constants.js';

/** A key as the panel lists it: never its value (only creation and `GET /keys/:id/value` give it). */
export const KeyItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(ScopeSchema),
  active: Type.Boolean(),
  expiresAt: Nullable(Instant),
  state: KeyStateSchema,
  createdAt: Instant,
});
export type ApiKey = Static<typeof KeyItem>;

export const KeyList = Type.Object({ items: Type.Array(KeyItem) });
export type KeyListBody = Static<typeof KeyList>;

/** `POST /keys`: the item with the value, shown this once. */
export const KeyCreated = Type.Object({ ...KeyItem.properties, key: Type.String() });
export type KeyCreatedBody = Static<typeof KeyCreated>;

/** `GET /keys/:id/value`. */
export const KeyValue = Type.Object({ key: Type.String() });
export type KeyValueBody = Static<typeof KeyValue>;

/** ISO 8601 date or instant (a date alone means its last millisecond, UTC), or null for none. */
const Expires = Nullable(Type.String());

/*
 * Scopes are strings here, not the enum: the service trims and de-duplicates them and answers
 * an unknown one with `unknown scope '…'` at /scopes (a message the panel and the CLI show),
 * which an enum in the schema would replace with ajv's own at /scopes/0. They are SCOPES.
 */
const ScopeNames = Type.Array(Type.String({ description: `one of ${SCOPES.join(', ')}` }));

export const KeyBody = Type.Object(
  { name: Type.String(), scopes: ScopeNames, active: Type.Optional(Type.Boolean()), expiresAt: Type.Optional(Expires) },
  { additionalProperties: false },
);
export type KeyInput = Static<typeof KeyBody>;

export const KeyPatch = Type.Object(
  {
    name: Type.Optional(Type.String()),
    scopes: Type.Optional(ScopeNames),
    active: Type.Optional(Type.Boolean()),
    expiresAt: Type.Optional(Expires),
  },
  { additionalProperties: false },
);
export type KeyPatchInput = Static<typeof KeyPatch>;
