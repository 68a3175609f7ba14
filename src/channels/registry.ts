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
 *   2. Create src/channels/sms/: `sms.channel.ts` (its ChannelDefinition; channel.ts says what
 *      each member means) and its transports, e.g. `twilio.ts` for the provider and
 *      `sms-outbox.ts` storing into the built-in outbox (outbox.ts) when none is configured.
 *   3. Write its renderer as src/rendering/sms.ts: pure (no I/O), used by its transports and by
 *      its `preview`. Rendering never sends; transports never build message content.
 *   4. Add its entry below, then run `npm run typecheck`: every Record<Channel, ...> (this one,
 *      the panel's CHANNEL_UI in src/admin-ui/src/channels/registry.ts) and the table types
 *      naming the channels (src/db/schema.ts) fail until the new channel is handled there.
 * Code outside src/channels/ reaches a channel only through this registry (or transports.ts).
 */
export const CHANNEL_REGISTRY: Readonly<Record<Channel, ChannelDefinition>> = {
  email: emailChannel,
  whatsapp: whatsappChannel,
};

/** The address a send on `channel` goes to: the contact's primary email or phone; null when it has none. */
export function recipientAddress(
  channel: Channel,
  contact: { email: string | null | undefined; phone: string | null | undefined },
): string | null {
  return contact[CHANNEL_REGISTRY[channel].address] ?? null;
}
