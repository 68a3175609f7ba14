import { createAccount, PLANS, type Plan, updateAccount } from '../../modules/accounts/accounts.service.js';
import { type CommandGroup, optionalString, parseCount, required, UsageError } from '../command.js';

function parsePlan(value: string | undefined): Plan | undefined {
  if (value === undefined) return undefined;
  if (!(PLANS as readonly string[]).includes(value)) throw new UsageError(`--plan must be free or pro, got '${value}'`);
  return value as Plan;
}

export const account: CommandGroup = {
  create: {
    options: { name: { type: 'string' }, plan: { type: 'string' }, allowance: { type: 'string' } },
    run: ({ db }, v) =>
      createAccount(db, {
        name: required(v, 'name'),
        plan: parsePlan(optionalString(v, 'plan')),
        allowance: parseCount(optionalString(v, 'allowance'), 'allowance', true),
      }),
  },
  update: {
    options: {
      account: { type: 'string' },
      plan: { type: 'string' },
      allowance: { type: 'string' },
      'whatsapp-phone-number-id': { type: 'string' },
      'whatsapp-token': { type: 'string' },
      'whatsapp-app-secret': { type: 'string' },
      'whatsapp-verify-token': { type: 'string' },
    },
    run: ({ db, config }, v) => {
      const phoneNumberId = optionalString(v, 'whatsapp-phone-number-id');
      const token = optionalString(v, 'whatsapp-token');
      const appSecret = optionalString(v, 'whatsapp-app-secret');
      if ((phoneNumberId === undefined) !== (token === undefined)) {
        throw new UsageError('--whatsapp-phone-number-id and --whatsapp-token go together');
      }
      if (appSecret !== undefined && phoneNumberId === undefined) {
        throw new UsageError('--whatsapp-app-secret needs --whatsapp-phone-number-id and --whatsapp-token');
      }
      return updateAccount(db, config, required(v, 'account'), {
        plan: parsePlan(optionalString(v, 'plan')),
        allowance: parseCount(optionalString(v, 'allowance'), 'allowance', true),
        whatsapp: phoneNumberId !== undefined && token !== undefined ? { phoneNumberId, token, appSecret } : undefined,
        // On its own: the handshake token is chosen when the callback URL is set up in Meta's app.
        whatsappVerifyToken: optionalString(v, 'whatsapp-verify-token'),
      });
    },
  },
};
