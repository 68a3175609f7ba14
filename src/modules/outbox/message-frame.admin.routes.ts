import type { FastifyPluginAsync } from 'fastify';
import { MessageFrameDocument } from '../../contract/admin/outbox.js';
import { CSP, securityHeaders } from '../../http/security-headers.js';

/** An empty document: the panel writes the message into it (components/MessageFrame.tsx). */
const EMPTY = '<!doctype html>\n<html><head><meta charset="utf-8"><title>Message</title></head><body></body></html>\n';

/**
 * `GET /admin/api/message-frame`: the document the panel shows email HTML in. It exists for its
 * headers: the panel's own policy forbids the inline styles and remote images of an email, and a
 * srcdoc or blob frame would inherit that policy; a document served with the message frame's
 * policy keeps its own, and with it whatever the panel writes into it (decisions.md, Admin panel).
 */
export const messageFrameAdminRoutes = (): FastifyPluginAsync => async (app) => {
  app.get('/message-frame', { schema: { hide: true, response: { 200: MessageFrameDocument } } }, async (_request, reply) =>
    reply
      .headers({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...securityHeaders(CSP.messageFrame) })
      .send(EMPTY),
  );
};
