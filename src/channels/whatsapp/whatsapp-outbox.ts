import type { Logger } from 'pino';
import type { Db } from '../../db/connect.js';
import { unsubscribeUrl } from '../../modules/unsubscribe/unsubscribe-token.js';
import { renderWhatsAppMessage } from '../../rendering/whatsapp.js';
import type { DeliveryReceipt, DeliveryRequest, Transport } from '../channel.js';
import { type OutboxConfig, storeInOutbox } from '../outbox.js';

/** WhatsApp for an account without Cloud API credentials: the request body that would have been posted, kept in the outbox. */
export function createWhatsAppOutboxTransport(config: OutboxConfig, db: Db, logger: Logger): Transport {
  return {
    async deliver(request: DeliveryRequest): Promise<DeliveryReceipt> {
      const message = await renderWhatsAppMessage({ ...request, unsubscribeUrl: unsubscribeUrl(config, request.send.id) });
      const id = await storeInOutbox(db, request, {
        channel: 'whatsapp',
        from_address: null,
        subject: null,
        html: null,
        text: null,
        headers: '{}',
        payload: JSON.stringify(message),
      });
      logger.debug({ sendId: request.send.id, outboxId: id }, 'whatsapp message kept in outbox');
      return { providerMessageId: id, delivered: true };
    },
  };
}
