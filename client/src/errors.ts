import type { components } from './generated/herald-api.js';

/** Herald's error body (decisions.md, Error responses), as the OpenAPI document describes it. */
export type ErrorBody = components['schemas']['ErrorBody'];
export type ErrorDetail = NonNullable<ErrorBody['details']>[number];

/**
 * A call Herald answered with an error status (after any retries): the status, Herald's exact
 * message, the field details of a Validation Error, and `code` when the body carries one.
 */
export class HeraldApiError extends Error {
  override readonly name = 'HeraldApiError';
  /** HTTP status, e.g. 400, 404, 429. */
  readonly status: number;
  /** The HTTP reason Herald names (`error` of the body), e.g. 'Validation Error', 'Not Found'. */
  readonly error: string;
  /** A stable machine-readable code, when Herald's error body has one. */
  readonly code: string | undefined;
  /** One entry per offending field (Validation Error). */
  readonly details: ErrorDetail[];
  /** Herald's request id (also in the x-request-id header), for its logs. */
  readonly requestId: string | undefined;
  /** The parsed body as received (or its text when it was not JSON). */
  readonly body: unknown;

  constructor(status: number, body: unknown, requestId?: string) {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Partial<ErrorBody> & { code?: unknown };
    const message = typeof b.message === 'string' ? b.message : typeof body === 'string' && body !== '' ? body : `HTTP ${status}`;
    super(message);
    this.status = status;
    this.error = typeof b.error === 'string' ? b.error : '';
    this.code = typeof b.code === 'string' ? b.code : undefined;
    this.details = Array.isArray(b.details) ? b.details : [];
    this.requestId = typeof b.requestId === 'string' ? b.requestId : (requestId ?? undefined);
    this.body = body;
  }
}
