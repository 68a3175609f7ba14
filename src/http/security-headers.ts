import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The browser security headers of every page Herald serves, in one place (decisions.md,
 * Admin panel). Each policy starts from nothing (`default-src 'none'`) and allows only what
 * its page uses.
 */
export const CSP = {
  /** Unsubscribe and broken-link pages: one inline style block, one form posting to itself. */
  recipientPage: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  /**
   * The admin panel and its API: Vite's build is one script and one stylesheet file, no inline
   * code (React sets `style` props through the DOM, which a CSP does not restrict). Frames only
   * from Herald itself (the message preview); nothing may frame the panel.
   */
  adminPanel:
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  /**
   * The panel's message frame (an email kept in the outbox or a campaign preview is written
   * into it): the email's images, styles and fonts from anywhere, as a mail client shows them;
   * never a script, a form, a plugin or a frame; framed by the panel only. The sandbox keeps the
   * origin so the panel can write the message in, and allows nothing else.
   */
  messageFrame:
    "default-src 'none'; img-src http: https: data:; style-src 'unsafe-inline' http: https:; font-src http: https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-same-origin",
} as const;

/** The CSP and the headers that go with it; X-Frame-Options repeats frame-ancestors for old browsers. */
export function securityHeaders(csp: string): Record<string, string> {
  return {
    'content-security-policy': csp,
    'x-frame-options': csp.includes("frame-ancestors 'self'") ? 'SAMEORIGIN' : 'DENY',
    'x-content-type-options': 'nosniff',
    // Addresses in the panel (ids) and on recipient pages (tokens) stay out of Referer headers.
    'referrer-policy': 'no-referrer',
  };
}

const ADMIN_HEADERS = securityHeaders(CSP.adminPanel);

/** Everything under /admin (the panel's pages, its assets, its API, its errors): the path is `/admin` or starts `/admin/`. */
export function isAdminPath(url: string): boolean {
  if (!url.startsWith('/admin')) return false;
  const next = url.charCodeAt(6);
  // The end of the URL, `/`, or the query's `?`.
  return Number.isNaN(next) || next === 0x2f || next === 0x3f;
}

/**
 * onRequest hook: everything under /admin carries the panel's headers; a route may replace
 * them with its own (the message frame). Also gives every answer its x-request-id. A callback
 * hook (no promise per request).
 */
export function requestHeaders(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('x-request-id', request.id);
  if (isAdminPath(request.url)) reply.headers(ADMIN_HEADERS);
  done();
}
