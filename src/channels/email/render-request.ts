import type { Config } from '../../config.js';
import { emailTracking } from '../../modules/tracking/email-links.js';
import { unsubscribeUrl } from '../../modules/unsubscribe/unsubscribe-token.js';
import { type RenderedEmail, renderEmail } from '../../rendering/email.js';
import type { DeliveryRequest } from '../channel.js';

/** The email of a send exactly as it goes out, whichever transport takes it (tracked links, unsubscribe headers). */
export async function renderEmailOf(config: Pick<Config, 'publicUrl' | 'secret'>, request: DeliveryRequest): Promise<RenderedEmail> {
  const email = await renderEmail({
    campaign: request.campaign,
    contact: request.contact,
    to: request.to,
    sendId: request.send.id,
    unsubscribeUrl: unsubscribeUrl(config, request.send.id),
    trigger: request.trigger,
    tracking: emailTracking(config, request.send.id),
  });
  return request.send.test ? markedAsTest(email) : email;
}

/**
 * A test send from the admin panel says so where a reader and a filter look: `[Test]` before
 * the subject and an `X-Herald-Test: true` header (decisions.md, Authoring).
 */
function markedAsTest(email: RenderedEmail): RenderedEmail {
  return { ...email, subject: `[Test] ${email.subject}`, headers: { ...email.headers, 'X-Herald-Test': 'true' } };
}
