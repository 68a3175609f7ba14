import type { Channel } from '../contract/constants.js';
import type { ChannelDefinition } from './channel.js';
import { emailChannel } from './email/email.channel.js';
import { whatsappChannel } from './whatsapp/whatsapp.channel.js';

/**
 * The channel registry: every channel Herald sends on, keyed by its name. Code that differs
 * by channel looks the channel up here; it never compares `channel === 'email'`.
 *
 * The folder rule (adding a channel, e.g. SMS):
 *   1. Add 'sms' to CHANNELS in src/contract/constants.ts (the admin API and the panel read it).
 *   2. Create src/channels/sms/ with `sms.channel.ts` (its ChannelDefinition, channel.ts says
 *      what each member means) and its transport(s) (e.g. `twilio.ts`); a transport that has
 *      no server to talk to stores into the outbox (outbox.ts).
 *   3. Its message renderer goes in src/rendering/sms.ts: pure (no I/O), shared by the
 *      transport, the outbox and the admin preview. Rendering never sends; transports never
 *      build message content themselves.
 *   4. Add the entry below. Then run `npm run typecheck`: every Record<Channel, ...> (this one,
 *      the panel's CHANNEL_UI in src/admin-ui/src/channels.ts) and every table type naming the
 *      channels (src/db/schema.ts) fails until the new channel is handled there.
 * Files outside src/channels/ and src/rendering/ never import a channel folder directly.
 */
export const CHANNEL_REGISTRY: Readonly<Record<Channel, ChannelDefinition>> = {
  email: emailChannel,
  whatsapp: whatsappChannel,
};

/** The address a send on `channel` goes to: the contact's primary email or phone; null when it has none. */
export function recipientAddress(channel: Channel, contact: { email: string | null | undefined; phone: string | null | undefined }): string | null {
  return contact[CHANNEL_REGISTRY[channel].address] ?? null;
}
