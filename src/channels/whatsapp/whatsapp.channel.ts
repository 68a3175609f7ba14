import { getWhatsAppCredentials } from '../../modules/accounts/whatsapp-credentials.js';
import { previewWhatsApp } from '../../rendering/whatsapp.js';
import type { ChannelDefinition, Transport } from '../channel.js';
import { createWhatsAppCloudTransport } from './cloud-api.js';
import { createWhatsAppOutboxTransport } from './whatsapp-outbox.js';

/**
 * WhatsApp template messages: rendered by rendering/whatsapp.ts and sent through the Cloud API
 * when the send's account has a phone number id and token, else kept in the outbox (decided per
 * send: accounts configure WhatsApp on their own).
 */
export const whatsappChannel: ChannelDefinition = {
  label: 'WhatsApp',
  address: 'phone',
  missingAddressReason: 'contact has no phone number',
  missingForActivation: ({ whatsapp }) => [...(whatsapp.template ? [] : ['whatsapp template']), ...(whatsapp.language ? [] : ['language'])],
  planToActivate: 'pro',
  webhooks: false,
  async deliveryAccount(db, config, accountId) {
    const credentials = await getWhatsAppCredentials(db, config, accountId);
    return credentials && { phoneNumberId: credentials.phoneNumberId, token: credentials.token };
  },
  preview: previewWhatsApp,
  createTransport({ config, db, logger }): Transport {
    const cloud = createWhatsAppCloudTransport(config, logger);
    const outbox = createWhatsAppOutboxTransport(config, db, logger);
    return { deliver: (request) => (request.account.whatsapp ? cloud.deliver(request) : outbox.deliver(request)) };
  },
};
