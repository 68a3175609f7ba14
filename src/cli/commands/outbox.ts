import { listOutbox, OUTBOX_MAX_LIMIT } from '../../channels/outbox.js';
import { getAccount } from '../../modules/accounts/accounts.service.js';
import { type CommandGroup, optionalString, required, UsageError } from '../command.js';

/** `herald outbox list`: what the built-in outbox kept (emails and WhatsApp requests), newest first. */
export const outbox: CommandGroup = {
  list: {
    options: { account: { type: 'string' }, campaign: { type: 'string' }, limit: { type: 'string' } },
    run: async ({ db }, v) => {
      const accountId = required(v, 'account');
      const limit = optionalString(v, 'limit');
      if (limit !== undefined && (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > OUTBOX_MAX_LIMIT)) {
        throw new UsageError(`--limit must be a whole number from 1 to ${OUTBOX_MAX_LIMIT}, got '${limit}'`);
      }
      // An unknown account is an error, not an empty list: a mistyped id should not look like "nothing sent".
      await getAccount(db, accountId);
      return listOutbox(db, accountId, {
        campaignId: optionalString(v, 'campaign'),
        limit: limit === undefined ? undefined : Number(limit),
      });
    },
  },
};
