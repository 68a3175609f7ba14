import type { Config } from '../../config.js';
import { emailTracking } from '../../modules/tracking/email-links.js';
import { unsubscribeUrl } from '../../modules/unsubscribe/unsubscribe-token.js';
import { type RenderedEmail, renderEmail } from '../../rendering/email.js';
import type { DeliveryRequest } from '../channel.js';

/** The email of a send exactly as it goes out, whichever transport takes it (tracked links, unsubscribe headers). */
export function renderEmailOf(config: Pick<Config, 'publicUrl' | 'secret'>, request: DeliveryRequest): Promise<RenderedEmail> {
  return renderEmail({
    campaign: request.campaign,
    contact: request.contact,
    to: request.to,
    sendId: request.send.id,
    unsubscribeUrl: unsubscribeUrl(config, request.send.id),
    trigger: request.trigger,
    tracking: emailTracking(config, request.send.id),
  });
}
