import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { Channel, DeliveryReceipt, DeliveryRequest } from './channel.js';
import { createEmailOutboxChannel, createWhatsAppOutboxChannel } from './outbox.js';
import { createSmtpChannel } from './smtp.js';
import { createWhatsAppCloudChannel } from './whatsapp.js';

export { DeliveryError, type Channel, type DeliveryReceipt, type DeliveryRequest } from './channel.js';
export { listOutbox, type OutboxItem } from './outbox.js';

export interface Channels {
  email: Channel;
  whatsapp: Channel;
  /** Closes the SMTP pool; call once on shutdown, after the last delivery. */
  close(): Promise<void>;
}

/**
 * The delivery channels of one process. Email goes over SMTP when SMTP_URL is set, else to the
 * outbox. WhatsApp is decided per send: the Cloud API when the send's account has a phone
 * number id and token, else the outbox (decisions.md: with no SMTP server or WhatsApp account
 * configured, sends go to a built-in outbox).
 */
export function createChannels(config: Config, db: Db, logger: Logger): Channels {
  const log = logger.child({ component: 'channels' });
  const email = config.smtpUrl ? createSmtpChannel(config, log) : createEmailOutboxChannel(config, db, log);
  const cloud = createWhatsAppCloudChannel(config, log);
  const whatsappOutbox = createWhatsAppOutboxChannel(config, db, log);
  const whatsapp: Channel = {
    deliver: (request: DeliveryRequest): Promise<DeliveryReceipt> =>
      request.account.whatsapp ? cloud.deliver(request) : whatsappOutbox.deliver(request),
  };
  return {
    email,
    whatsapp,
    async close() {
      await email.close?.();
    },
  };
}
