import { listWebhookDeliveries, MAX_LIST_LIMIT } from '../../webhooks/list.js';
import { type CommandGroup, optionalString, parseCount, required, UsageError } from '../command.js';

export const webhook: CommandGroup = {
  /** The delivery log of a campaign's webhooks, each delivery with every attempt. */
  deliveries: {
    options: { account: { type: 'string' }, campaign: { type: 'string' }, limit: { type: 'string' } },
    run: async ({ db }, v) => {
      const limit = parseCount(optionalString(v, 'limit'), 'limit', false) ?? undefined;
      if (limit !== undefined && (limit < 1 || limit > MAX_LIST_LIMIT)) throw new UsageError(`--limit must be from 1 to ${MAX_LIST_LIMIT}`);
      const items = await listWebhookDeliveries(db, required(v, 'account'), required(v, 'campaign'), { limit });
      return { items };
    },
  },
};
