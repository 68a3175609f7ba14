/**
 * Retries of one logical call: on a network error, on 429 (waiting as long as Retry-After says)
 * and on 5xx, with exponential backoff and full jitter, up to a number of attempts. Any other
 * answer (2xx, 3xx, other 4xx) is final. The very same request (headers included, so its
 * Idempotency-Key) is sent again on each attempt.
 */

export interface RetryOptions {
  /** Retries after the first attempt (0: never retry). Default 3. */
  retries?: number;
  /** Backoff before retry n (from 0): a random delay up to min(maxDelayMs, baseDelayMs * 2^n). Default 200 ms. */
  baseDelayMs?: number;
  /** Cap of one backoff delay. Default 5 s. */
  maxDelayMs?: number;
  /** The longest Retry-After honoured; a 429 or 503 asking for more is returned as it is. Default 60 s. */
  maxRetryAfterMs?: number;
}

export const RETRY_DEFAULTS: Required<RetryOptions> = { retries: 3, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 60_000 };

/** Error codes of a connection that failed or broke (Node's net and undici's), for fetches that throw them bare. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** A request that never got an answer: fetch's TypeError ("fetch failed"), or a connection error code. */
export function isNetworkError(err: unknown): boolean {
  if (err instanceof TypeError) return true;
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  }
  return false;
}

/** Retry-After as milliseconds from `now`: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its day or month in letters ("Wed, 25 Nov 2026 20:00:05 GMT"); Date.parse alone takes "-1" for a year.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Full jitter: a uniform delay up to the exponential cap, so clients that failed together do not retry together. */
export function backoffDelay(retry: number, options: Required<RetryOptions>, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry));
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** How long to wait before retrying after `response`, or undefined when it is final. */
function retryDelay(response: Response, retry: number, options: Required<RetryOptions>): number | undefined {
  const { status } = response;
  if (status !== 429 && status < 500) return undefined;
  const asked = status === 429 || status === 503 ? parseRetryAfter(response.headers.get('retry-after')) : undefined;
  if (asked === undefined) return backoffDelay(retry, options);
  // Retrying sooner than asked would only be refused again: past the cap, the answer is final.
  return asked <= options.maxRetryAfterMs ? asked : undefined;
}

/** Wraps a fetch so that each call is retried as described above (the caller's abort signal stops it). */
export function retryingFetch(inner: (request: Request) => Promise<Response>, retryOptions: RetryOptions = {}) {
  const options = { ...RETRY_DEFAULTS, ...retryOptions };
  return async (request: Request): Promise<Response> => {
    for (let retry = 0; ; retry++) {
      const last = retry >= options.retries;
      // A body can be read once: each attempt sends a copy, the original stays unread.
      const attempt = last ? request : request.clone();
      let delay: number;
      try {
        const response = await inner(attempt);
        const wait = last ? undefined : retryDelay(response, retry, options);
        if (wait === undefined) return response;
        await response.body?.cancel();
        delay = wait;
      } catch (err) {
        if (last || request.signal?.aborted || !isNetworkError(err)) throw err;
        delay = backoffDelay(retry, options);
      }
      await sleep(delay, request.signal ?? null);
    }
  };
}
