import { STATUS_CODES } from 'node:http';
import { type TSchema, Type } from 'typebox';
import { ERROR_CODES, type ErrorCode, type Problem, publicCode } from '../errors.js';

/**
 * What a route declares so both OpenAPI documents describe every answer it can give: the
 * success (description, examples) and the error codes of src/errors.ts it can answer. The
 * per-status descriptions, the exact messages and the example bodies of the errors are
 * generated from ERROR_CODES, never copied: a message changed there changes the documents.
 *
 *   schema: {
 *     operationId: 'logEvent', tags: ['events'], summary: '...', description: '...',
 *     body: EventBody,
 *     ...documented({
 *       success: { schema: EventResponse, description: 'The event as stored', examples: { logged: { summary, value } } },
 *       errors: [...KEY_ERRORS, ...JSON_BODY_ERRORS, 'LEAD_OR_TRACKER_REQUIRED', 'LEAD_NOT_FOUND'],
 *     }),
 *   }
 *
 * `documented` gives Fastify the response schemas (the success's, ErrorBody for each error
 * status) and leaves the rest in the `x-herald-doc` extension, which completeOperation turns
 * into the operation's responses (and removes).
 */

export const DOC_EXTENSION = 'x-herald-doc';

/** A response header a route adds to its success (the common ones are added to every response). */
export type ExtraHeader = 'Idempotent-Replayed';

export interface Example {
  summary: string;
  value: unknown;
}

/** An error code, or one with the message and details its example shows (a CONFLICT's own text). */
export type DeclaredError = ErrorCode | { code: ErrorCode; message?: string; details?: Problem[] };

export interface Declaration<S extends TSchema = TSchema> {
  success: {
    /** 200 unless said. */
    status?: number;
    /** No body (204): give `Type.Null()`, no examples. */
    schema: S;
    description: string;
    examples?: Record<string, Example>;
    headers?: ExtraHeader[];
  };
  errors: readonly DeclaredError[];
}

/** What a request carrying an API key can be refused for before its route runs (decisions.md, order of checks). */
export const KEY_ERRORS = [
  'API_KEY_REQUIRED',
  'API_KEY_NOT_FOUND',
  'API_KEY_INACTIVE',
  'API_KEY_EXPIRED',
  'API_KEY_FORBIDDEN',
  'RATE_LIMITED',
] as const satisfies readonly ErrorCode[];

/** What a JSON body can be refused for: not JSON, too large, not declared JSON, wrong shape. */
export const JSON_BODY_ERRORS = [
  'INVALID_JSON',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'VALIDATION',
] as const satisfies readonly ErrorCode[];

/** What a request sent with an Idempotency-Key can be refused for (http/idempotency.ts). */
export const IDEMPOTENCY_ERRORS = ['IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED'] as const satisfies readonly ErrorCode[];

/** Every route can fail unexpectedly: added to each operation by completeOperation. */
const ALWAYS: ErrorCode = 'INTERNAL';

const codeOf = (error: DeclaredError): ErrorCode => (typeof error === 'string' ? error : error.code);

/** The route schema's `response` map and the declaration for the documents. */
export function documented<S extends TSchema>(declaration: Declaration<S>) {
  const status = declaration.success.status ?? 200;
  const errors: Record<number, TSchema> = {};
  for (const error of [...declaration.errors, ALWAYS]) errors[ERROR_CODES[codeOf(error)][0]] = Type.Ref('ErrorBody');
  return {
    response: { ...errors, [status]: declaration.success.schema } as Record<number, TSchema> & { 200: S },
    [DOC_EXTENSION]: { ...declaration, success: { ...declaration.success, schema: undefined } },
  };
}

/**
 * The example body of one error, exactly as the error handler writes it (errorBody): the
 * table's status and message, the reason phrase, `details` for a Validation Error and
 * `requestId` for a 500.
 */
export function exampleErrorBody(error: DeclaredError): Record<string, unknown> {
  const code = codeOf(error);
  const [status, tableMessage] = ERROR_CODES[code];
  const own: { message?: string; details?: Problem[] } = typeof error === 'string' ? {} : error;
  const body: Record<string, unknown> = {
    statusCode: status,
    error: STATUS_CODES[status],
    code: publicCode(code),
    message: own.message ?? tableMessage,
  };
  if (code === 'VALIDATION') body.details = own.details ?? [{ path: '/email', message: 'must be a valid email address' }];
  if (code === 'INTERNAL') body.requestId = '0b5d6c8e-2f4a-4c61-9f3e-7a1d2b3c4e5f';
  return body;
}

/** Response headers: each a component, referenced where it applies. */
export const HEADERS: Record<string, { name: string; header: Record<string, unknown> }> = {
  XRequestId: {
    name: 'x-request-id',
    header: {
      description: 'The id of this request in the logs (a UUID); every response carries it.',
      schema: { type: 'string', format: 'uuid' },
    },
  },
  RateLimitLimit: {
    name: 'RateLimit-Limit',
    header: {
      description: "The key's quota: the most requests it can send at once (the burst). On every answer once the key is known.",
      schema: { type: 'integer', minimum: 1 },
    },
  },
  RateLimitRemaining: {
    name: 'RateLimit-Remaining',
    header: { description: 'Requests the key can still send now, this one counted.', schema: { type: 'integer', minimum: 0 } },
  },
  RateLimitReset: {
    name: 'RateLimit-Reset',
    header: { description: "Seconds until the key's quota is whole again.", schema: { type: 'integer', minimum: 0 } },
  },
  RetryAfter: {
    name: 'Retry-After',
    header: { description: 'Seconds to wait before the next request can pass.', schema: { type: 'integer', minimum: 1 } },
  },
  IdempotentReplayed: {
    name: 'Idempotent-Replayed',
    header: {
      description: 'Present, `true`, when this answer replays the one stored for the Idempotency-Key.',
      schema: { type: 'string', enum: ['true'] },
    },
  },
};
const HEADER_OF: Record<ExtraHeader, string> = { 'Idempotent-Replayed': 'IdempotentReplayed' };

type Json = Record<string, unknown>;

/**
 * Fills an operation's responses from its declaration (DOC_EXTENSION): for the success its
 * description, examples and headers; for each error status the messages it can carry, one
 * example per code, and its headers. `usedHeaders` collects the header components referenced.
 */
export function completeOperation(operation: Json, usedHeaders: Set<string>): void {
  const declaration = operation[DOC_EXTENSION] as Declaration | undefined;
  delete operation[DOC_EXTENSION];
  if (!declaration) return;
  const keyed = declaration.errors.some((e) => codeOf(e) === 'API_KEY_REQUIRED');
  const headers = (names: string[]) => {
    const all = ['XRequestId', ...(keyed ? ['RateLimitLimit', 'RateLimitRemaining', 'RateLimitReset'] : []), ...names];
    for (const name of all) usedHeaders.add(name);
    return Object.fromEntries(all.map((name) => [HEADERS[name]!.name, { $ref: `#/components/headers/${name}` }]));
  };
  const responses = (operation.responses ?? {}) as Record<string, Json>;
  const success = declaration.success;
  const status = String(success.status ?? 200);
  responses[status] ??= {};
  const successResponse = responses[status];
  successResponse.description = success.description;
  successResponse.headers = headers((success.headers ?? []).map((h) => HEADER_OF[h]));
  const media = (successResponse.content as Record<string, Json> | undefined)?.['application/json'];
  if (media && success.examples) {
    delete media.example;
    media.examples = success.examples;
  }

  // One example per code; a code declared with its own message or details wins over the bare code.
  const byCode = new Map<ErrorCode, DeclaredError>();
  for (const error of [...declaration.errors, ALWAYS]) {
    if (!byCode.has(codeOf(error)) || typeof error !== 'string') byCode.set(codeOf(error), error);
  }
  const byStatus = new Map<number, DeclaredError[]>();
  for (const [code, error] of byCode) {
    const errorStatus = ERROR_CODES[code][0];
    byStatus.set(errorStatus, [...(byStatus.get(errorStatus) ?? []), error]);
  }
  for (const [errorStatus, errors] of [...byStatus].sort(([a], [b]) => a - b)) {
    const messages = errors.map((e) => {
      const body = exampleErrorBody(e);
      return `\`${body.message}\` (\`${body.code}\`)`;
    });
    responses[String(errorStatus)] = {
      description: `${STATUS_CODES[errorStatus]}: ${messages.join('; ')}.`,
      headers: headers(errorStatus === 429 ? ['RetryAfter'] : []),
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/ErrorBody' },
          examples: Object.fromEntries(
            errors.map((e) => {
              const body = exampleErrorBody(e);
              return [String(body.code), { summary: String(body.message), value: body }];
            }),
          ),
        },
      },
    };
  }
  delete responses['4XX'];
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * A member validated leniently but documented precisely (a KPI value: anything is accepted and
 * what is not a number is skipped with a warning, but a caller should send a number or a
 * decimal string). The keyword is an annotation for ajv; the documents show its schema instead.
 */
export const DOCUMENTED_AS = 'x-documented-as';

export function documentedAsKeyword<A extends { addKeyword(definition: { keyword: string; schemaType: 'object' }): unknown }>(ajv: A): A {
  ajv.addKeyword({ keyword: DOCUMENTED_AS, schemaType: 'object' });
  return ajv;
}

/**
 * Replaces, everywhere in a document, each schema carrying DOCUMENTED_AS with that schema
 * (description kept), and shows Herald's own `maxDepth` keyword (json-limits.ts), which is no
 * JSON Schema keyword, as the extension `x-max-depth`.
 */
export function applyDocumentedAs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(applyDocumentedAs);
  if (!node || typeof node !== 'object') return node;
  const object = node as Json;
  const own = object[DOCUMENTED_AS];
  if (own && typeof own === 'object') {
    const description = object.description;
    return applyDocumentedAs({ ...(description ? { description } : {}), ...(own as Json) });
  }
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k === 'maxDepth' ? 'x-max-depth' : k, applyDocumentedAs(v)]));
}

/** The header components a document references. */
export const headerComponents = (used: Set<string>) => Object.fromEntries([...used].sort().map((name) => [name, HEADERS[name]!.header]));
