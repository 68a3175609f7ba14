import type { Config } from '../../config.js';
import { memoUpTo } from '../../lru.js';
import { clickTokenTarget, clickUrl, MAX_TRACKED_URL_LENGTH, openPixelUrl } from './tracking-token.js';

/** What the email renderer needs to track one send: a click address per link, and the pixel. */
export interface EmailTracking {
  /** The click URL that redirects to `target`, an absolute http(s) address in canonical form. */
  clickUrl(target: string): string;
  pixelUrl: string;
}

export function emailTracking(config: Pick<Config, 'publicUrl' | 'secret'>, sendId: string, now = Date.now()): EmailTracking {
  return {
    clickUrl: (target) => clickUrl(config, sendId, target, now),
    pixelUrl: openPixelUrl(config, sendId, now),
  };
}

/**
 * Elements whose `href` a reader follows: links, image-map areas, and the VML shapes Outlook
 * draws "bulletproof" buttons with (inside `<!--[if mso]>` conditional comments).
 */
const LINK_ELEMENTS = new Set(['a', 'area', 'v:roundrect', 'v:rect', 'v:oval', 'v:shape']);

/**
 * One pass over the markup: plain comments and raw-text elements are skipped whole (a link
 * written inside them is not a link); everything else is scanned tag by tag. Conditional
 * comments (`<!--[if mso]>`) are not plain comments: their inside is markup Outlook renders,
 * so the scan goes on through them. A tag's attributes are matched with their quotes, so a
 * `>` inside a quoted value does not end the tag.
 */
const MARKUP =
  /<!--(?!\[if)[\s\S]*?-->|<(script|style|textarea|title)\b[\s\S]*?<\/\1\s*>|<([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?/g;

/**
 * Rewrites every http(s) link of rendered HTML to its click URL, except those `keep` names
 * (the unsubscribe link: it must keep working as itself, and is not a click).
 *
 * Hand-written rather than through an HTML parser: a parser re-serialises the document, and
 * marketing HTML (Outlook conditionals, odd attribute quoting) must reach the reader byte for
 * byte apart from the rewritten `href` values. Other links (mailto:, tel:, #anchors, relative
 * ones) and addresses that cannot be parsed are left as they are.
 */
export function trackLinks(html: string, clickUrlFor: (target: string) => string, keep: (target: string) => boolean): string {
  return html.replace(MARKUP, (whole, rawText: string | undefined, name: string | undefined, attributes: string | undefined) => {
    if (rawText !== undefined || name === undefined || !LINK_ELEMENTS.has(name.toLowerCase())) return whole;
    const rewritten = rewriteHref(attributes ?? '', clickUrlFor, keep);
    return rewritten === undefined ? whole : `<${name}${rewritten}>`;
  });
}

function rewriteHref(attributes: string, clickUrlFor: (target: string) => string, keep: (target: string) => boolean): string | undefined {
  for (const match of attributes.matchAll(ATTRIBUTE)) {
    if (match[1]!.toLowerCase() !== 'href') continue;
    // Browsers use the first of duplicated attributes: so do we, tracked or not.
    const raw = match[2];
    if (raw === undefined) return undefined;
    const value = decodeAttribute(/^["']/.test(raw) ? raw.slice(1, -1) : raw).trim();
    const target = trackable(value);
    if (target === undefined || keep(value) || keep(target)) return undefined;
    const start = match.index!;
    return `${attributes.slice(0, start)}href="${escapeAttribute(clickUrlFor(target))}"${attributes.slice(start + match[0].length)}`;
  }
  return undefined;
}

/**
 * The address a browser would follow, in canonical form (WHATWG URL: non-ASCII escaped,
 * host lowercased), so the redirect's Location header is valid ASCII and means the same.
 */
function trackable(value: string): string | undefined {
  if (!/^https?:\/\//i.test(value) || value.length > MAX_TRACKED_URL_LENGTH) return undefined;
  // A campaign's links are the same in each of its messages: each is parsed once, not per send.
  return memoUpTo(canonicalLinks, CANONICAL_LINKS_KEPT, value, () => canonical(value)) ?? undefined;
}

function canonical(value: string): string | null {
  try {
    const href = new URL(value).href;
    return href.length > MAX_TRACKED_URL_LENGTH ? null : href;
  } catch {
    return null;
  }
}

/** Links parsed (their canonical form, or null: not trackable), forgotten all at once when full. */
const canonicalLinks = new Map<string, string | null>();
const CANONICAL_LINKS_KEPT = 10_000;

/** Adds the open pixel at the end of the body (before `</body>`, or at the very end). */
export function appendPixel(html: string, pixelUrl: string): string {
  const img = `<img src="${escapeAttribute(pixelUrl)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">`;
  const bodyEnd = html.search(/<\/body\s*>(?![\s\S]*<\/body\s*>)/i);
  return bodyEnd === -1 ? `${html}${img}\n` : `${html.slice(0, bodyEnd)}${img}\n${html.slice(bodyEnd)}`;
}

/**
 * Kept HTML as the reader would see it untracked (the admin panel's view of a sent message:
 * looking at it must never count an open or a click). The open pixel appendPixel wrote is
 * removed; each click address becomes the address it redirects to; any other address of our
 * tracking endpoints (a token we cannot read, a pixel pasted into a template) becomes
 * about:blank. So nothing in the view can reach /t/o or /t/c of this Herald. Both patterns
 * are linear: a template cannot make this slow.
 */
export function untrackHtml(html: string, config: Pick<Config, 'publicUrl' | 'secret'>): string {
  const ours = escapeRegExp(config.publicUrl);
  const pixelTag = new RegExp(`<img src="${ours}/t/o/[A-Za-z0-9_.-]*" width="1" height="1" alt="" style="[^"]*">\\n?`, 'g');
  const trackingUrl = new RegExp(`${ours}/t/([oc])/([A-Za-z0-9_.-]*)`, 'gi');
  return html.replace(pixelTag, '').replace(trackingUrl, (_whole, kind: string, token: string) => {
    const target = kind.toLowerCase() === 'c' ? clickTokenTarget(config, token) : undefined;
    return target === undefined ? 'about:blank' : escapeAttribute(target);
  });
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Character references in an attribute value (`&amp;` in a query string is the usual one). */
function decodeAttribute(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED[ref.toLowerCase()] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
