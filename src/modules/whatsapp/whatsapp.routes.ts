import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { sendError } from '../../http/error-handler.js';
import { applyChanges, isKnownVerifyToken, isWellFormedSignature, verifiedChanges } from './whatsapp-callbacks.service.js';
import { readChanges } from './whatsapp-payload.js';

/** Meta batches callbacks, but a payload stays far below this. */
const CALLBACK_BODY_LIMIT = 1024 * 1024;
/** Meta's challenge is a short number; anything longer is not Meta asking. */
const MAX_CHALLENGE_LENGTH = 256;

/**
 * The WhatsApp Cloud API callback URL, one for all accounts (README, Tracking):
 *
 * - GET: Meta's verification handshake. Answers `hub.challenge` as text when `hub.mode` is
 *   subscribe and `hub.verify_token` is some account's verify token; 403 otherwise.
 * - POST: status updates and inbound messages. The payload's phone number id names the account;
 *   X-Hub-Signature-256 must be the HMAC of the exact bytes received with that account's app
 *   secret, so the body is read raw and parsed only here. A missing or wrong signature is 401
 *   and changes nothing.
 */
export const whatsappRoutes =
  ({ config, db }: AppDeps): FastifyPluginAsync =>
  async (app) => {
    // Scoped to this plugin: the signature covers the raw bytes, which JSON.parse would lose.
    app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: CALLBACK_BODY_LIMIT }, (_request, body, done) => {
      done(null, body);
    });

    app.get('/whatsapp/webhook', { schema: { hide: true } }, async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const token = query['hub.verify_token'];
      const challenge = query['hub.challenge'];
      const accepted =
        query['hub.mode'] === 'subscribe' &&
        typeof token === 'string' &&
        typeof challenge === 'string' &&
        challenge !== '' &&
        challenge.length <= MAX_CHALLENGE_LENGTH &&
        (await isKnownVerifyToken(db, config, token));
      if (!accepted) return sendError(reply, new AppError('WHATSAPP_VERIFICATION_REFUSED'));
      // Text, never HTML: the challenge is echoed as received.
      return reply
        .code(200)
        .headers({ 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' })
        .send(challenge);
    });

    app.post('/whatsapp/webhook', { schema: { hide: true } }, async (request, reply) => {
      const header = request.headers['x-hub-signature-256'];
      const signature = Array.isArray(header) ? undefined : header;
      if (!isWellFormedSignature(signature)) return sendError(reply, new AppError('WHATSAPP_SIGNATURE_INVALID'));
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new AppError('INVALID_JSON');
      }
      // Nothing in the payload is acted on before the signature is checked against an account.
      const changes = readChanges(payload);
      const verified = await verifiedChanges(db, config, raw, signature, changes);
      if (verified.size === 0) {
        request.log.warn(
          { phoneNumberIds: [...new Set(changes.map((c) => c.phoneNumberId))] },
          'whatsapp callback refused: signature matches no account',
        );
        return sendError(reply, new AppError('WHATSAPP_SIGNATURE_INVALID'));
      }
      for (const [accountId, own] of verified) {
        const applied = await applyChanges(db, accountId, own);
        request.log.info({ accountId, statuses: applied.statuses, optedOut: applied.optedOut }, 'whatsapp callback applied');
      }
      return reply.code(200).send({ received: true });
    });
  };
