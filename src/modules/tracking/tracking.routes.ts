import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { CSP, securityHeaders } from '../../http/security-headers.js';
import { siteScriptRoute } from './site-script.js';
import { trackEngagement } from './tracking.service.js';
import { readClickToken, readOpenToken } from './tracking-token.js';

/** The smallest transparent 1x1 GIF (43 bytes). */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** The words of the page a broken or expired click link shows, in one place so they can be translated. */
export const LINK_TEXT = {
  lang: 'en',
  invalidTitle: 'Link not valid',
  invalidBody: 'This link is not valid or has expired.',
} as const;

/**
 * The recipient-facing tracking addresses (decisions.md, Sends): the open pixel and the click
 * redirect, both named by a signed token, plus the public site script. They need no key and
 * stay out of the public OpenAPI document.
 *
 * A fetch is counted only for a genuine, unexpired token; anything else is 404 and counts
 * nothing. HEAD (link scanners and previews probe with it) is answered the same way and is
 * never counted. A failure to record never breaks what the reader sees: the pixel still
 * shows, the redirect still happens, and the failure is logged.
 */
export const trackingRoutes =
  ({ config, db }: AppDeps): FastifyPluginAsync =>
  async (app) => {
    app.get<{ Params: { token: string } }>('/t/o/:token', { schema: { hide: true } }, async (request, reply) => {
      const open = readOpenToken(config, request.params.token);
      if (
        !open ||
        !(await track(request, () => trackEngagement(db, { sendId: open.sendId, kind: 'open' }, { count: request.method === 'GET' })))
      ) {
        throw new AppError('NOT_FOUND');
      }
      return (
        reply
          .code(200)
          // Every fetch must reach us to be counted: no browser, proxy or image cache may keep it.
          .headers({ 'content-type': 'image/gif', 'cache-control': 'no-store, max-age=0', pragma: 'no-cache', 'x-robots-tag': 'noindex' })
          .send(PIXEL_GIF)
      );
    });

    app.get<{ Params: { token: string } }>('/t/c/:token', { schema: { hide: true } }, async (request, reply) => {
      const click = readClickToken(config, request.params.token);
      if (
        !click ||
        !(await track(request, () =>
          trackEngagement(db, { sendId: click.sendId, kind: 'click', url: click.url }, { count: request.method === 'GET' }),
        ))
      ) {
        return invalidLink(reply);
      }
      // Exactly the address signed into the token: the query string of this request plays no part.
      return reply.code(302).headers({ location: click.url, 'cache-control': 'no-store', 'x-robots-tag': 'noindex' }).send();
    });

    await app.register(siteScriptRoute);
  };

/** Records; a database failure is logged and treated as counted, so the reader is not let down. */
async function track(request: FastifyRequest, record: () => Promise<boolean>): Promise<boolean> {
  try {
    return await record();
  } catch (err) {
    request.log.error({ err }, 'recording an engagement failed');
    return true;
  }
}

function invalidLink(reply: FastifyReply): FastifyReply {
  const [lang, title, text] = [LINK_TEXT.lang, LINK_TEXT.invalidTitle, LINK_TEXT.invalidBody].map(escapeHtml);
  const body = `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style>
</head>
<body>
<h1>${title}</h1>
<p>${text}</p>
</body>
</html>
`;
  return reply
    .code(404)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-robots-tag': 'noindex',
      ...securityHeaders(CSP.recipientPage),
    })
    .send(body);
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
