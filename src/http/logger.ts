import type { FastifyRequest } from 'fastify';
import pino, { type DestinationStream, type Logger } from 'pino';
import { SESSION_COOKIE } from '../modules/admin/auth/sessions.js';
import { decodeEscapes, redactKeys } from '../redact-keys.js';

/**
 * Secrets that travel in URLs are cut out of every logged URL:
 * - the `api-key` query value, and the WhatsApp handshake's `hub.verify_token`;
 * - the token of a recipient link (unsubscribe, open pixel, click redirect): whoever holds one
 *   can unsubscribe that contact or count opens and clicks, so the path after the route's
 *   prefix is replaced.
 * - any API key value, wherever it sits and however it is spelled (redactKeys): the names above
 *   miss `&amp;api-key=`, `api-key[]=` and `;api-key=`, the key's shape does not. The same cut
 *   runs on every finished log line (redactLine below), so a key in an error message or a
 *   header is not written either.
 * Headers carrying keys are never serialised (the request serializer below lists what is logged).
 *
 * Names are compared decoded, as the router and the query parser read them: `?%61pi-key=` is
 * the `api-key` parameter to the auth hook, and `/%75nsubscribe/...` reaches the unsubscribe
 * route, so they must be redacted too.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  const path = redactKeys(redactPath(start === -1 ? url : url.slice(0, start)));
  if (start === -1) return path;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((part) => {
      const name = part.split('=', 1)[0]!;
      return isSecretParameter(name) ? `${name}=[REDACTED]` : part;
    })
    .join('&');
  return `${path}?${redactKeys(query)}`;
}

/** Routes whose last path segment is a bearer token (the unsubscribe, pixel and click links). */
const TOKEN_PATH = /^(\/+(?:unsubscribe|t\/+o|t\/+c)\/+)[\s\S]/i;

function redactPath(path: string): string {
  const match = TOKEN_PATH.exec(decodeEscapes(path));
  return match ? `${match[1]}[REDACTED]` : path;
}

const SECRET_PARAMETERS = new Set(['api-key', 'hub.verify_token']);

function isSecretParameter(rawName: string): boolean {
  return SECRET_PARAMETERS.has(decodeEscapes(rawName).toLowerCase());
}

/**
 * The last cut on every written line: API keys by their shape, and the panel's session cookie
 * by its name (its token has no shape of its own), wherever a header or a message put them.
 */
const SESSION_PAIR = new RegExp(`(${SESSION_COOKIE}=)[^;\\s"',]+`, 'g');
export function redactLine(line: string): string {
  return redactKeys(line.includes(SESSION_COOKIE) ? line.replace(SESSION_PAIR, '$1[REDACTED]') : line);
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: {
      paths: [
        'req.headers["x-service-api-key"]',
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-csrf-token"]',
        '*.password',
        '*.token',
        '*.key',
      ],
      censor: '[REDACTED]',
    },
    hooks: { streamWrite: redactLine },
    serializers: {
      req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
