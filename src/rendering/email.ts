import { DeliveryError } from '../channels/channel.js';
import { invalid } from '../errors.js';
import type { Campaign } from '../modules/campaigns/campaign.js';
import type { ContactProfile } from '../modules/contacts/contacts.service.js';
import { appendPixel, type EmailTracking, trackLinks } from '../modules/tracking/email-links.js';
import { htmlToText } from './html-to-text.js';
import { renderHtmlTemplate, renderTemplate } from './liquid.js';
import { type EmailPreview, PREVIEW_SEND_ID, type PreviewInput } from './preview.js';
import { type TriggerData, templateVariables } from './variables.js';

/** One email, ready for SMTP or the outbox. */
export interface RenderedEmail {
  from: string;
  to: string;
  subject: string;
  /** null for a text-only campaign. */
  html: string | null;
  text: string;
  /** Extra headers: List-Unsubscribe and List-Unsubscribe-Post (RFC 8058). */
  headers: Record<string, string>;
  /** `<sendId@sender-domain>`: the same on every attempt of a send (see renderEmail). */
  messageId: string;
}

export interface EmailRenderInput {
  campaign: Campaign;
  contact: ContactProfile;
  to: string;
  sendId: string;
  unsubscribeUrl: string;
  /** The trigger call's `data` (`{{ trigger.* }}`); absent or null: none. */
  trigger?: TriggerData | null;
  /** Click and open tracking of the HTML part; absent for an untracked render (previews). */
  tracking?: EmailTracking;
}

/**
 * The words of the unsubscribe footer, in one place so they can be translated. The footer is
 * added to a part only when that part does not already show the unsubscribe link.
 */
export const EMAIL_FOOTER_TEXT = {
  html: 'You receive this email because you are on our list.',
  link: 'Unsubscribe',
  text: 'Unsubscribe:',
} as const;

/**
 * Renders a campaign's email for one contact (pure: no I/O).
 *
 * - subject and text render as plain text; HTML renders with every output escaped, so contact
 *   data cannot inject markup. A missing variable renders empty.
 * - Parts: HTML and text when both are configured; HTML only configured: the text part is
 *   derived from the rendered HTML (mail clients and spam filters expect both); text only:
 *   a text-only email, since inventing HTML from plain text adds nothing for the reader.
 * - Unsubscribe: a part whose rendered output already shows `unsubscribe_url` is left as is;
 *   any other part gets a footer with the link. Both carry the RFC 8058 headers.
 * - Tracking (when given): every http(s) link of the HTML part but the unsubscribe link goes
 *   through a click redirect, and an open pixel ends the body. The text part keeps the plain
 *   addresses: a reader of plain text sees where a link goes, and it is derived from the
 *   HTML before tracking, so it never shows a redirect address.
 * - Message-ID names the send, so a retried send (delivery is at least once) reaches the
 *   mailbox with the Message-ID of the first attempt and can be recognised as a duplicate.
 *
 * Throws a permanent DeliveryError when the campaign cannot make an email at all.
 */
export async function renderEmail(input: EmailRenderInput): Promise<RenderedEmail> {
  const { campaign, unsubscribeUrl } = input;
  const from = campaign.email.from?.trim();
  if (!from) throw new DeliveryError('campaign has no sender address (from)', false);
  if (!campaign.email.html && !campaign.email.text) throw new DeliveryError('campaign has no email body (html or text)', false);

  const variables = templateVariables(input.contact, campaign, unsubscribeUrl, input.trigger);
  const subject = render(renderTemplate, campaign.email.subject ?? '', variables, 'subject');
  const renderedHtml = campaign.email.html ? render(renderHtmlTemplate, campaign.email.html, variables, 'html') : null;
  const renderedText = campaign.email.text ? render(renderTemplate, campaign.email.text, variables, 'text') : null;

  const html = renderedHtml === null ? null : withTracking(withHtmlFooter(renderedHtml, unsubscribeUrl), unsubscribeUrl, input.tracking);
  const text = withTextFooter(renderedText ?? htmlToText(renderedHtml ?? ''), unsubscribeUrl);
  return {
    from,
    to: input.to,
    // A header is one line: newlines from a template or contact data would break it.
    subject: subject.replace(/[\r\n]+/g, ' ').trim(),
    html,
    text,
    headers: {
      'List-Unsubscribe': `<${unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
    messageId: `<${input.sendId}@${senderDomain(from)}>`,
  };
}

/** Stands for the sender of a draft that has none yet: the preview shows subject and bodies, never the sender. */
const PREVIEW_FROM = 'preview@herald.invalid';

/** The email as the admin preview shows it: untracked, to the contact's primary address. */
export async function previewEmail({ campaign, contact, unsubscribeUrl, trigger }: PreviewInput): Promise<EmailPreview> {
  if (!campaign.email.html && !campaign.email.text) throw invalid('/campaign/html', 'nothing to preview: the campaign has no html or text');
  const email = await renderEmail({
    campaign: { ...campaign, email: { ...campaign.email, from: campaign.email.from ?? PREVIEW_FROM } },
    contact,
    to: contact.emails[0] ?? '',
    sendId: PREVIEW_SEND_ID,
    unsubscribeUrl,
    trigger,
  });
  return { subject: email.subject, html: email.html, text: email.text };
}

type Renderer = (source: string, variables: Record<string, unknown>) => string;

function render(renderer: Renderer, source: string, variables: Record<string, unknown>, part: string): string {
  try {
    return renderer(source, variables);
  } catch (err) {
    // Syntax is checked when the campaign is saved; what is left fails the same way every time.
    throw new DeliveryError(`email ${part} template failed to render: ${(err as Error).message.split('\n')[0]}`, false);
  }
}

function withHtmlFooter(html: string, url: string): string {
  if (html.includes(url) || html.includes(escapeHtml(url))) return html;
  const footer =
    `<p style="margin-top:24px;font-size:12px;color:#666666">${escapeHtml(EMAIL_FOOTER_TEXT.html)} ` +
    `<a href="${escapeHtml(url)}">${escapeHtml(EMAIL_FOOTER_TEXT.link)}</a></p>`;
  const bodyEnd = html.search(/<\/body\s*>(?![\s\S]*<\/body\s*>)/i);
  return bodyEnd === -1 ? `${html}\n${footer}\n` : `${html.slice(0, bodyEnd)}${footer}\n${html.slice(bodyEnd)}`;
}

function withTracking(html: string, unsubscribeUrl: string, tracking: EmailTracking | undefined): string {
  if (!tracking) return html;
  const tracked = trackLinks(html, tracking.clickUrl, (target) => target === unsubscribeUrl);
  return appendPixel(tracked, tracking.pixelUrl);
}

function withTextFooter(text: string, url: string): string {
  if (text.includes(url)) return text;
  return `${text.replace(/\s+$/, '')}\n\n--\n${EMAIL_FOOTER_TEXT.text} ${url}\n`;
}

/** The domain of the From address, for the Message-ID; a neutral one if it cannot be read. */
function senderDomain(from: string): string {
  const match = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from);
  return match?.[1]?.toLowerCase() ?? 'herald.invalid';
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
