import { previewEmail } from '../../rendering/email.js';
import type { ChannelDefinition } from '../channel.js';
import { createEmailOutboxTransport } from './email-outbox.js';
import { createSmtpTransport } from './smtp.js';

/** Email: rendered by rendering/email.ts, sent over SMTP when SMTP_URL is set, else kept in the outbox. */
export const emailChannel: ChannelDefinition = {
  label: 'Email',
  address: 'email',
  missingAddressReason: 'contact has no email address',
  missingForActivation: ({ email }) => [
    ...(email.from ? [] : ['from']),
    ...(email.subject ? [] : ['subject']),
    ...(email.html || email.text ? [] : ['html or text']),
  ],
  planToActivate: null,
  webhooks: true,
  preview: previewEmail,
  createTransport: ({ config, db, logger }) =>
    config.smtpUrl ? createSmtpTransport(config, logger) : createEmailOutboxTransport(config, db, logger),
};
