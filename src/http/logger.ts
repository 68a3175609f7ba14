import pino, { type DestinationStream, type Logger } from 'pino';
import type { FastifyRequest } from 'fastify';

/**
 * Secrets that travel in URLs are cut out of every logged URL:
 * - the `api-key` query value, and the WhatsApp handshake's `hub.verify_token`;
 * - the token of a recipient link (unsubscribe, open pixel, click redirect): whoever holds one
 *   can unsubscribe that contact or count opens and clicks, so the path after the route's
 *   prefix is replaced.
 * Headers carrying keys are never serialised (the request serializer below lists what is logged).
 *
 * Names are compared decoded, as the router and the query parser read them: `?%61pi-key=` is
 * the `api-key` parameter to the auth hook, and `/%75nsubscribe/...` reaches the unsubscribe
 * route, so they must be redacted too.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  const path = redactPath(start === -1 ? url : url.slice(0, start));
  if (start === -1) return path;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((part) => {
      const name = part.split('=', 1)[0]!;
      return isSecretParameter(name) ? `${name}=[REDACTED]` : part;
    })
    .join('&');
  return `${path}?${query}`;
}

/** Routes whose last path segment is a bearer token (the unsubscribe, pixel and click links). */
const TOKEN_PATH = /^(\/+(?:unsubscribe|t\/+o|t\/+c)\/+)[^]/i;

function redactPath(path: string): string {
  const match = TOKEN_PATH.exec(decodeEscapes(path));
  return match ? `${match[1]}[REDACTED]` : path;
}

const SECRET_PARAMETERS = new Set(['api-key', 'hub.verify_token']);

function isSecretParameter(rawName: string): boolean {
  return SECRET_PARAMETERS.has(decodeEscapes(rawName).toLowerCase());
}

/** Decodes each `%XX` on its own so a malformed escape elsewhere cannot hide the name. */
function decodeEscapes(value: string): string {
  return value.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: {
      paths: ['req.headers["x-service-api-key"]', 'req.headers.authorization', 'req.headers.cookie', '*.password', '*.token', '*.key'],
      censor: '[REDACTED]',
    },
    serializers: {
      req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
