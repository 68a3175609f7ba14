import type { Channel } from '../../../contract/constants';
import { EmailMessageSection } from './EmailMessageSection';
import { EmailPreviewView } from './EmailPreviewView';
import type { ChannelUi } from './types';
import { WhatsAppMessageSection } from './WhatsAppMessageSection';
import { WhatsAppPreviewView } from './WhatsAppPreviewView';

/**
 * The panel's side of the channel registry (the server's is src/channels/registry.ts): every
 * page that differs by channel looks it up here. A new channel in CHANNELS makes this Record
 * incomplete, so the type checker names it until its entry (and its components here) exist.
 */
export const CHANNEL_UI: Readonly<Record<Channel, ChannelUi>> = {
  email: {
    label: 'Email',
    tone: 'blue',
    webhooks: true,
    MessageSection: EmailMessageSection,
    content: (input) => ({ channel: 'email', from: input.from, subject: input.subject, html: input.html, text: input.text }),
    PreviewView: EmailPreviewView,
    untitled: { list: '(no subject)', page: '(no subject)' },
    payloadTitle: 'Payload',
  },
  whatsapp: {
    label: 'WhatsApp',
    tone: 'violet',
    note: '(paid plan)',
    webhooks: false,
    MessageSection: WhatsAppMessageSection,
    content: (input) => ({
      channel: 'whatsapp',
      whatsappTemplate: input.whatsappTemplate,
      language: input.language,
      whatsappParams: input.whatsappParams,
    }),
    PreviewView: WhatsAppPreviewView,
    untitled: { list: 'WhatsApp template message', page: 'WhatsApp message' },
    payloadTitle: 'Cloud API request',
  },
};
