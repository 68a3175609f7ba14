/**
 * Herald's TypeScript client: the generated `paths` type (openapi-typescript, from /openapi.json),
 * openapi-fetch underneath, and a thin layer on top:
 *
 * - the API key goes in the `x-service-api-key` header, never in a URL;
 * - every POST carries an `Idempotency-Key` (a fresh UUID per call, or the caller's), the same on each retry;
 * - network errors, 429 (after its Retry-After) and 5xx are retried with backoff (retry.ts);
 * - a failed call throws a HeraldApiError with Herald's status, message, details and code.
 *
 * It imports nothing from the server (src/): it is built only from the OpenAPI document.
 */
import createClient, { type Client } from 'openapi-fetch';
import { HeraldApiError } from './errors.js';
import type { paths } from './generated/herald-api.js';
import { type RetryOptions, retryingFetch } from './retry.js';

export { type ErrorBody, type ErrorDetail, HeraldApiError } from './errors.js';
export type { components, paths } from './generated/herald-api.js';
export { isNetworkError, parseRetryAfter, RETRY_DEFAULTS, type RetryOptions } from './retry.js';

export const API_KEY_HEADER = 'x-service-api-key';
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;

/** The paths that have an operation for `M`; a new route is here as soon as the types are regenerated. */
export type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];
/** The JSON body of an operation. */
export type RequestBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody: infer R }
    ? Json<R>
    : Operation<P, M> extends { requestBody?: infer R }
      ? Json<R> | undefined
      : never;
/** The query parameters of an operation. */
export type QueryParams<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { query: infer Q } } ? Q : never;
/** The JSON of an operation's success answer (200, 201, 202 or 207). */
export type ResponseBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: infer R }
    ? R extends { 200: infer S }
      ? Json<S>
      : R extends { 201: infer S }
        ? Json<S>
        : R extends { 202: infer S }
          ? Json<S>
          : R extends { 207: infer S }
            ? Json<S>
            : undefined
    : never;

export interface HeraldClientOptions extends RetryOptions {
  /** Herald's address, e.g. https://herald.example.com (no trailing path). */
  baseUrl: string;
  /** An API key (hk_...), sent in the x-service-api-key header. A server-side secret: never ship it to a browser. */
  apiKey: string;
  /** The fetch to use (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers added to every call (e.g. a User-Agent). */
  headers?: Record<string, string>;
}

export interface CallOptions {
  /** Aborts the call, its retries and the waits between them. */
  signal?: AbortSignal;
  /** The Idempotency-Key of a POST (default: a fresh UUID per call). Pass your own to dedupe across restarts. */
  idempotencyKey?: string;
}

export type LeadInput = RequestBody<'/api/leads', 'post'>;
export type LeadResult = ResponseBody<'/api/leads', 'post'>;
export type EventInput = RequestBody<'/api/events', 'post'>;
export type EventResult = ResponseBody<'/api/events', 'post'>;
export type TriggerInput = RequestBody<'/api/campaigns/trigger', 'post'>;
export type TriggerResult = ResponseBody<'/api/campaigns/trigger', 'post'>;
export type CancelInput = RequestBody<'/api/campaigns/cancel', 'post'>;
export type CancelResult = ResponseBody<'/api/campaigns/cancel', 'post'>;

export interface HeraldClient {
  /** Create or update a contact (POST /api/leads). */
  upsertLead(lead: LeadInput, options?: CallOptions): Promise<LeadResult>;
  /** Log an event in a contact's history (POST /api/events). */
  recordEvent(event: EventInput, options?: CallOptions): Promise<EventResult>;
  /** Trigger an API-triggered campaign for one contact (POST /api/campaigns/trigger). */
  trigger(input: TriggerInput, options?: CallOptions): Promise<TriggerResult>;
  /** Cancel a pending delayed send (POST /api/campaigns/cancel). */
  cancel(input: CancelInput, options?: CallOptions): Promise<CancelResult>;
  /** Any POST operation of the document, typed from the generated paths. */
  post<P extends PathsWith<'post'>>(path: P, body: RequestBody<P, 'post'>, options?: CallOptions): Promise<ResponseBody<P, 'post'>>;
  /** Any GET operation of the document, typed from the generated paths. */
  get<P extends PathsWith<'get'>>(path: P, query: QueryParams<P, 'get'>, options?: CallOptions): Promise<ResponseBody<P, 'get'>>;
  /** The underlying openapi-fetch client (same key header, Idempotency-Key and retries; answers `{ data, error, response }`). */
  readonly api: Client<paths>;
}

export function createHeraldClient(options: HeraldClientOptions): HeraldClient {
  if (!options.apiKey) throw new TypeError('createHeraldClient: apiKey is required');
  const baseUrl = new URL(options.baseUrl);
  if (baseUrl.search || baseUrl.username || baseUrl.password) {
    throw new TypeError('createHeraldClient: baseUrl must not carry a query or credentials (the key goes in a header)');
  }
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api = createClient<paths>({
    baseUrl: baseUrl.toString().replace(/\/+$/, ''),
    headers: { ...options.headers, [API_KEY_HEADER]: options.apiKey },
    fetch: retryingFetch(fetchImpl, options),
  });
  api.use({
    onRequest({ request }) {
      // Herald also reads an api-key query parameter; this client never puts the key in a URL (URLs end up in logs).
      if (new URL(request.url).searchParams.has('api-key')) {
        throw new TypeError('the API key goes in the x-service-api-key header (createHeraldClient apiKey), never in the URL');
      }
      // Once per logical call, before the retrying fetch: every attempt carries the same key.
      if (request.method === 'POST' && !request.headers.has(IDEMPOTENCY_KEY_HEADER)) {
        request.headers.set(IDEMPOTENCY_KEY_HEADER, globalThis.crypto.randomUUID());
      }
      return request;
    },
  });

  const headersOf = (call: CallOptions | undefined) => (call?.idempotencyKey ? { [IDEMPOTENCY_KEY_HEADER]: call.idempotencyKey } : {});

  async function unwrap<T>(pending: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await pending;
    if (!response.ok) throw new HeraldApiError(response.status, error, response.headers.get('x-request-id') ?? undefined);
    return data as T;
  }

  // openapi-fetch's overloads cannot be called with a generic path; the public signatures above carry the types.
  const untyped = api as unknown as {
    POST(path: string, init: object): Promise<{ data?: unknown; error?: unknown; response: Response }>;
    GET(path: string, init: object): Promise<{ data?: unknown; error?: unknown; response: Response }>;
  };

  const post: HeraldClient['post'] = (path, body, call) =>
    unwrap(untyped.POST(path, { body, headers: headersOf(call), signal: call?.signal }));
  const get: HeraldClient['get'] = (path, query, call) => unwrap(untyped.GET(path, { params: { query }, signal: call?.signal }));

  return {
    upsertLead: (lead, call) => post('/api/leads', lead, call),
    recordEvent: (event, call) => post('/api/events', event, call),
    trigger: (input, call) => post('/api/campaigns/trigger', input, call),
    cancel: (input, call) => post('/api/campaigns/cancel', input, call),
    post,
    get,
    api,
  };
}
