import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { CSP, securityHeaders } from '../../http/security-headers.js';
import { findUnsubscribeTarget, optOutBySend, pageBrandOf } from './unsubscribe.service.js';
import { confirmPage, donePage, invalidPage, testLinkPage } from './unsubscribe-page.js';
import { readUnsubscribeToken } from './unsubscribe-token.js';

/** A one-click body is a few dozen bytes; nothing bigger has a reason to arrive here. */
const FORM_BODY_LIMIT = 4096;

/**
 * The recipient-facing unsubscribe link (decisions.md, Sends). GET only shows a confirmation
 * page: mail scanners and link previews fetch links, and must not opt anyone out. POST is the
 * RFC 8058 one-click request (and the page's button). These are pages for people, so they
 * answer HTML, errors included, and stay out of the public OpenAPI document.
 */
export const unsubscribeRoutes =
  ({ config, db }: AppDeps): FastifyPluginAsync =>
  async (app) => {
    // Scoped to this plugin: the rest of the API accepts JSON only. RFC 8058 allows the one-click
    // body as a urlencoded form or as multipart/form-data; the body itself carries nothing we
    // need (the signed token is the authority), so it is read and not interpreted.
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_req, _body, done) => {
      done(null, {});
    });

    app.get<{ Params: { token: string } }>('/unsubscribe/:token', { schema: { hide: true } }, async (request, reply) => {
      const sendId = readUnsubscribeToken(config, request.params.token);
      const target = sendId === undefined ? undefined : await findUnsubscribeTarget(db, sendId);
      if (!target) return html(reply, 404, invalidPage());
      const brand = await pageBrandOf(db, target.accountId);
      if (target.testToOtherAddress) return html(reply, 200, testLinkPage(brand));
      return html(reply, 200, target.optedOut ? donePage(brand) : confirmPage(brand));
    });

    app.post<{ Params: { token: string } }>('/unsubscribe/:token', { schema: { hide: true } }, async (request, reply) => {
      const sendId = readUnsubscribeToken(config, request.params.token);
      const target = sendId === undefined ? undefined : await findUnsubscribeTarget(db, sendId);
      if (sendId === undefined || !target || !(await optOutBySend(db, sendId))) return html(reply, 404, invalidPage());
      const brand = await pageBrandOf(db, target.accountId);
      if (target.testToOtherAddress) return html(reply, 200, testLinkPage(brand));
      request.log.info({ sendId }, 'contact unsubscribed');
      return html(reply, 200, donePage(brand));
    });
  };

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      // The token is in the address: keep it out of Referer headers (no-referrer) and search indexes.
      'x-robots-tag': 'noindex',
      ...securityHeaders(CSP.recipientPage),
    })
    .send(body);
}
