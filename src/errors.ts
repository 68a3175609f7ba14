/**
 * Services throw codes, never HTTP statuses; this one table maps each code to the status and
 * the exact message of service-spec.md / decisions.md, and names the stable machine `code`
 * every error body carries: the key itself, or the third element where the internal name is
 * too terse for callers (VALIDATION answers `VALIDATION_ERROR`). A public code never changes
 * once shipped (docs/decisions.md, Error codes); the OpenAPI documents list them from here.
 */
export const ERROR_CODES = {
  API_KEY_REQUIRED: [401, 'API key is required'],
  API_KEY_NOT_FOUND: [404, 'API key not found'],
  API_KEY_INACTIVE: [403, 'API key is not active'],
  API_KEY_EXPIRED: [403, 'API key has expired'],
  API_KEY_FORBIDDEN: [403, 'API key does not have the required permissions'],
  RATE_LIMITED: [429, 'Too Many Requests'],
  INVALID_JSON: [400, 'Invalid JSON body'],
  PAYLOAD_TOO_LARGE: [413, 'Payload Too Large'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported Media Type'],
  VALIDATION: [400, 'Validation Error', 'VALIDATION_ERROR'],
  LEAD_OR_TRACKER_REQUIRED: [400, 'leadId or tracker is required'],
  LEAD_NOT_FOUND: [404, 'Lead not found'],
  IDENTIFIER_CONFLICT: [409, 'Identifier belongs to another contact'],
  CAMPAIGN_NOT_FOUND: [404, 'Campaign not found'],
  CAMPAIGN_NOT_API: [400, 'Campaign is not configured for API triggers', 'CAMPAIGN_NOT_API_TRIGGERED'],
  CAMPAIGN_NOT_ACTIVE: [400, 'Campaign is not active'],
  ALLOWANCE_EXHAUSTED: [402, 'Monthly send allowance exhausted'],
  ACCOUNT_NOT_FOUND: [404, 'Account not found'],
  KEY_NOT_FOUND: [404, 'API key not found'],
  // Idempotency-Key of the public API's POSTs (README, decisions.md "Idempotent retries").
  IDEMPOTENCY_KEY_IN_USE: [409, 'A request with this Idempotency-Key is still being processed'],
  IDEMPOTENCY_KEY_REUSED: [422, 'Idempotency-Key was used with a different request'],
  // Admin panel (docs/admin-api.md).
  NOT_SIGNED_IN: [401, 'Not signed in'],
  INVALID_CREDENTIALS: [401, 'Invalid email or password'],
  CSRF: [403, 'Invalid CSRF token', 'CSRF_TOKEN_INVALID'],
  ADMIN_ONLY: [403, 'Administrators only'],
  LOGIN_THROTTLED: [429, 'Too many sign-in attempts'],
  USER_NOT_FOUND: [404, 'User not found'],
  SEGMENT_NOT_FOUND: [404, 'Segment not found'],
  OUTBOX_MESSAGE_NOT_FOUND: [404, 'Message not found'],
  FIELD_NOT_FOUND: [404, 'Custom field not found'],
  KPI_NOT_FOUND: [404, 'KPI not found'],
  CONFLICT: [409, 'Conflict'],
  NOT_FOUND: [404, 'Not Found'],
  BAD_URL: [400, 'Invalid URL'],
  METHOD_NOT_ALLOWED: [405, 'Method Not Allowed'],
  // Operations (README, Running in production).
  METRICS_TOKEN_REQUIRED: [401, 'Metrics token is required'],
  // WhatsApp Cloud API callbacks (docs/decisions.md, WhatsApp).
  WHATSAPP_VERIFICATION_REFUSED: [403, 'Verification refused'],
  WHATSAPP_SIGNATURE_INVALID: [401, 'Invalid signature'],
  // Requests Node's HTTP parser refuses before any route (http/error-handler.ts, clientErrorHandler).
  MALFORMED_REQUEST: [400, 'Malformed HTTP request'],
  REQUEST_TIMEOUT: [408, 'Request Timeout'],
  HEADERS_TOO_LARGE: [431, 'Request Header Fields Too Large'],
  INTERNAL: [500, 'Internal Server Error', 'INTERNAL_ERROR'],
} as const satisfies Record<string, readonly [number, string] | readonly [number, string, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

type PublicName<C extends ErrorCode> = (typeof ERROR_CODES)[C] extends readonly [number, string, infer P] ? P : C;
/** The `code` member of error bodies: stable, documented, what callers branch on. */
export type PublicErrorCode = { [C in ErrorCode]: PublicName<C> }[ErrorCode];

/** The `code` an error body carries for an internal code. */
export function publicCode(code: ErrorCode): PublicErrorCode {
  const entry: readonly unknown[] = ERROR_CODES[code];
  return (entry[2] ?? code) as PublicErrorCode;
}

/** One item of a Validation Error's `details` (or of a 200 response's `warnings`). */
export interface Problem {
  /** JSON pointer to the member at fault, e.g. `/email` or `/fields/2`. */
  path: string;
  message: string;
}

export interface AppErrorOptions {
  /** For `VALIDATION`: what is wrong and where. */
  details?: Problem[];
  /** Replaces the table's message where the table's text names a family (CONFLICT, NOT_FOUND). */
  message?: string;
  /** Extra response headers, e.g. Retry-After on 429. */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** The body's `code` (publicCode). */
  readonly publicCode: PublicErrorCode;
  readonly details?: Problem[];
  readonly headers?: Record<string, string>;
  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const status = ERROR_CODES[code][0];
    // A client's error (4xx) is an answer, not a fault: it is never logged with a stack, and
    // capturing one cost microseconds on every refused request, and on every refusal that a
    // decision taken before a read throws only to drop it (unlessRefused). 5xx keep theirs.
    const stackTraceLimit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    try {
      super(options.message ?? ERROR_CODES[code][1]);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.code = code;
    this.status = status;
    this.publicCode = publicCode(code);
    this.details = options.details;
    this.headers = options.headers;
  }
}

/** Shorthand for the most common throw: a 400 Validation Error naming one member. */
export function invalid(path: string, message: string): AppError {
  return new AppError('VALIDATION', { details: [{ path, message }] });
}

/**
 * `decide()`, or undefined when the rules refuse (an AppError): for a decision taken before the
 * read that would tell, whose refusal is then the read's to make, in the order of the checks.
 */
export function unlessRefused<T>(decide: () => T | undefined): T | undefined {
  try {
    return decide();
  } catch (err) {
    if (err instanceof AppError) return undefined;
    throw err;
  }
}
