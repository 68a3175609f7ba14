import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_MESSAGE } from '../contract/common.js';
import { AppError, ERROR_CODES, type ErrorCode, type Problem } from '../errors.js';
import { IdempotencyKeyTaken } from '../modules/idempotency/idempotency.service.js';
import { replayTakenKey } from './idempotency.js';

/**
 * The one error body of decisions.md: `{statusCode, error, code, message, details?, requestId?}`;
 * also each failed item's body in a batch's results.
 */
export function errorBody(err: AppError, requestId?: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    statusCode: err.status,
    error: STATUS_CODES[err.status] ?? 'Error',
    code: err.publicCode,
    message: err.message,
  };
  // A Validation Error always lists its details; other errors only when they carry some (a missing scope names it).
  if (err.code === 'VALIDATION' || err.details) body.details = err.details ?? [];
  if (requestId) body.requestId = requestId;
  return body;
}

export function sendError(reply: FastifyReply, err: AppError, requestId?: string): FastifyReply {
  const body = errorBody(err, requestId);
  if (err.headers) reply.headers(err.headers);
  return reply.code(err.status).type('application/json; charset=utf-8').send(body);
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** The schema holding the failed keyword (ajv's `verbose` option). */
  parentSchema?: Record<string, unknown>;
}

/**
 * Plugin of the app's ajv: the `x-error-message` annotation (src/contract/common.ts). With ajv's
 * `verbose` option each error carries its schema, so a choice field answers its own message.
 */
export function errorMessageKeyword<A extends { addKeyword(definition: { keyword: string; schemaType: 'string' }): unknown }>(ajv: A): A {
  ajv.addKeyword({ keyword: ERROR_MESSAGE, schemaType: 'string' });
  return ajv;
}

/** Turns ajv's errors into `details` whose paths name the member at fault, never the root. */
export function validationDetails(errors: AjvError[]): Problem[] {
  return collapseUnions(errors).map((e) => {
    const own = e.parentSchema?.[ERROR_MESSAGE];
    if (typeof own === 'string') return { path: e.instancePath || '/', message: own };
    if (e.keyword === 'required') return { path: `${e.instancePath}/${String(e.params.missingProperty)}`, message: 'is required' };
    if (e.keyword === 'additionalProperties') {
      return { path: `${e.instancePath}/${String(e.params.additionalProperty)}`, message: 'is not an accepted member' };
    }
    // A body that is JSON but not an object (a list, a string): no member is at fault.
    if (e.instancePath === '' && e.keyword === 'type') return { path: '/', message: 'the request body must be a JSON object' };
    return { path: e.instancePath || '/', message: e.message ?? 'is invalid' };
  });
}

/**
 * ajv reports a value checked against a union (`anyOf`) once per branch, plus the union itself.
 * Where the value fails inside the branch whose type it has, only those errors are about it;
 * where it has no branch's type, or is none of a union's constants, the complaints become one.
 */
function collapseUnions(errors: AjvError[]): AjvError[] {
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  if (unionPaths.size === 0) return errors;
  const collapsed: AjvError[] = errors.filter((e) => !unionPaths.has(e.instancePath));
  for (const path of unionPaths) {
    const atPath = errors.filter((e) => e.instancePath === path && e.keyword !== 'anyOf');
    const types = atPath.filter((e) => e.keyword === 'type').map((e) => String(e.params.type));
    const inner = atPath.filter((e) => e.keyword !== 'type');
    const failedInside = inner.length > 0 || errors.some((e) => e.instancePath.startsWith(`${path}/`));
    if (inner.length > 0 && inner.every((e) => e.keyword === 'const')) {
      const allowed = inner.map((e) => JSON.stringify(e.params.allowedValue)).join(', ');
      collapsed.push({ instancePath: path, keyword: 'enum', params: {}, message: `must be one of ${allowed}` });
    } else if (failedInside) {
      collapsed.push(...inner);
    } else {
      collapsed.push({ instancePath: path, keyword: 'type', params: {}, message: `must be ${types.join(' or ')}` });
    }
  }
  return collapsed;
}

/** Fastify's own errors (body parsing, validation) mapped onto our codes. */
function fromFastifyError(err: FastifyError & { validation?: AjvError[] }): AppError | undefined {
  if (err.validation) return new AppError('VALIDATION', { details: validationDetails(err.validation) });
  const mapped: Record<string, ErrorCode> = {
    FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
    FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_JSON',
    FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
    FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  };
  if (err.code && mapped[err.code]) return new AppError(mapped[err.code]);
  // JSON syntax errors and prototype-poisoning refusals come from the body parser as 400s.
  if (err.statusCode === 400 && (err instanceof SyntaxError || /json|prototype|constructor/i.test(err.message))) {
    return new AppError('INVALID_JSON');
  }
  if (err.statusCode === 413) return new AppError('PAYLOAD_TOO_LARGE');
  if (err.statusCode === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE');
  return undefined;
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (thrown: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let err: unknown = thrown;
    // The request's Idempotency-Key was claimed by another: its transaction is over, now look the key up.
    if (err instanceof IdempotencyKeyTaken) {
      try {
        return await replayTakenKey(reply, err);
      } catch (lookupError) {
        err = lookupError;
      }
    }
    const known = err instanceof AppError ? err : fromFastifyError(err as FastifyError);
    if (known) return sendError(reply, known);
    // Anything else is our bug: log it in full, answer without internals.
    request.log.error({ err }, 'unhandled error');
    return sendError(reply, new AppError('INTERNAL'), request.id);
  });

  installNotFound(app);
}

/**
 * Fastify's `frameworkErrors` option: failures met before routing (a path with a malformed
 * %-escape, an over-long parameter) answer in the same JSON shape, with an x-request-id,
 * instead of Fastify's own body. The onRequest hooks do not run for these requests.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  if (err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendError(reply, new AppError('BAD_URL'));
    return;
  }
  request.log.error({ err }, 'unhandled framework error');
  sendError(reply, new AppError('INTERNAL'), request.id);
}

/** What Node's HTTP parser refuses before Fastify sees a request, with the code each answers. */
const CLIENT_ERRORS: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/**
 * Fastify's `clientErrorHandler`: a request that Node's HTTP parser refuses (malformed, headers
 * over 16 KB, too slow) never reaches a route or a hook. It still answers in the one error shape
 * with an x-request-id (Fastify's default writes a body of its own, without the header).
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = new AppError(CLIENT_ERRORS[err.code ?? ''] ?? 'MALFORMED_REQUEST');
  const status = refusal.status;
  const requestId = randomUUID();
  this.log.debug({ requestId, code: err.code }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify(errorBody(refusal));
    // The answer to a HEAD has no body (a client would read one as garbage after the response).
    const isHead = Buffer.isBuffer(err.rawPacket) && err.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${isHead ? '' : body}`,
    );
  }
  socket.destroy(err);
}

/** Unknown paths answer 404 JSON; a known path with the wrong method answers 405 with Allow. */
function installNotFound(app: FastifyInstance): void {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}/?$`);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    routes.push({ pattern, methods: new Set(methods) });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = new Set<string>();
    for (const route of routes) if (route.pattern.test(path)) route.methods.forEach((m) => allowed.add(m));
    if (allowed.size > 0) {
      reply.header('allow', [...allowed].sort().join(', '));
      return sendError(reply, new AppError('METHOD_NOT_ALLOWED'));
    }
    return sendError(reply, new AppError('NOT_FOUND'));
  });
}

export { ERROR_CODES };
