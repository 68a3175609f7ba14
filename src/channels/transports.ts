import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { CHANNELS, type Channel } from '../contract/constants.js';
import type { Db } from '../db/connect.js';
import type { Transport } from './channel.js';
import { CHANNEL_REGISTRY } from './registry.js';

export { DeliveryError, type DeliveryReceipt, type DeliveryRequest, type Transport } from './channel.js';
export { listOutbox, type OutboxItem } from './outbox.js';

/** One transport per channel, and a close for shutdown. */
export type Channels = Readonly<Record<Channel, Transport>> & {
  /** Closes the SMTP pool; call once on shutdown, after the last delivery. */
  close(): Promise<void>;
};

/**
 * The delivery transports of one process, one per channel of the registry. Email goes over
 * SMTP when SMTP_URL is set, else to the outbox. WhatsApp is decided per send: the Cloud API
 * when the send's account has a phone number id and token, else the outbox (decisions.md: with
 * no SMTP server or WhatsApp account configured, sends go to a built-in outbox).
 */
export function createChannels(config: Config, db: Db, logger: Logger): Channels {
  const context = { config, db, logger: logger.child({ component: 'channels' }) };
  const transports = Object.fromEntries(CHANNELS.map((channel) => [channel, CHANNEL_REGISTRY[channel].createTransport(context)])) as Record<
    Channel,
    Transport
  >;
  return {
    ...transports,
    async close() {
      await Promise.all(CHANNELS.map((channel) => transports[channel].close?.()));
    },
  };
}
