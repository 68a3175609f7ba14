import { createKey, updateKey } from '../../modules/keys/keys.service.js';
import { type CommandGroup, optionalString, parseBool, parseWhen, required } from '../command.js';

const scopeList = (value: string) => value.split(',').map((s) => s.trim());

export const key: CommandGroup = {
  create: {
    options: {
      account: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      expires: { type: 'string' },
      inactive: { type: 'boolean' },
    },
    run: ({ db, config }, v) =>
      createKey(db, config, required(v, 'account'), {
        name: required(v, 'name'),
        scopes: scopeList(required(v, 'scopes')),
        active: v.inactive !== true,
        expiresAt: parseWhen(optionalString(v, 'expires'), 'expires', false) ?? null,
      }),
  },
  update: {
    options: {
      account: { type: 'string' },
      key: { type: 'string' },
      active: { type: 'string' },
      expires: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
    },
    run: ({ db }, v) => {
      const scopes = optionalString(v, 'scopes');
      return updateKey(db, required(v, 'account'), required(v, 'key'), {
        name: optionalString(v, 'name'),
        active: parseBool(optionalString(v, 'active'), 'active'),
        expiresAt: parseWhen(optionalString(v, 'expires'), 'expires', true),
        scopes: scopes === undefined ? undefined : scopeList(scopes),
      });
    },
  },
};
