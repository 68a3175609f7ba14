import type { Logger } from 'pino';
import type { Db } from '../../db/connect.js';
import type { DeliveryReceipt, DeliveryRequest, Transport } from '../channel.js';
import { type OutboxConfig, storeInOutbox } from '../outbox.js';
import { renderEmailOf } from './render-request.js';

/** Email without SMTP_URL: the email exactly as SMTP would get it (tracked links, headers), kept in the outbox. */
export function createEmailOutboxTransport(config: OutboxConfig, db: Db, logger: Logger): Transport {
  return {
    async deliver(request: DeliveryRequest): Promise<DeliveryReceipt> {
      const email = await renderEmailOf(config, request);
      const id = await storeInOutbox(db, request, {
        channel: 'email',
        from_address: email.from,
        subject: email.subject,
        html: email.html,
        text: email.text,
        headers: JSON.stringify({ 'Message-ID': email.messageId, ...email.headers }),
        payload: null,
      });
      logger.debug({ sendId: request.send.id, outboxId: id }, 'email kept in outbox');
      return { providerMessageId: id, delivered: true };
    },
  };
}
