/**
 * The one way the panel talks to the admin API: same-origin JSON with the session cookie,
 * the CSRF token on every write, and every failure turned into an ApiError carrying the
 * server's message and its Validation Error details (so forms can show them by member).
 */

export interface Problem {
  /** JSON pointer to the member at fault, e.g. `/name` or `/webhooks/1`. */
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: Problem[] = [],
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let onSignedOut: (() => void) | null = null;

/** Set from the login/session answer; cleared on sign-out. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the server says the session is gone (401 on an ordinary call). */
export function setSignedOutHandler(handler: (() => void) | null): void {
  onSignedOut = handler;
}

const BASE = '/admin/api';

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(BASE + path, {
      method,
      credentials: 'same-origin',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The server cannot be reached. Check your connection and try again.');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!response.ok) {
    const body = (data ?? {}) as { message?: unknown; details?: unknown };
    const message =
      typeof body.message === 'string' ? body.message : `The server answered ${response.status} ${response.statusText}`.trim();
    const details = Array.isArray(body.details) ? (body.details as Problem[]).filter((d) => d && typeof d.path === 'string') : [];
    if (response.status === 401 && path !== '/login' && path !== '/session') onSignedOut?.();
    throw new ApiError(response.status, message, details);
  }
  return data as T;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: (path: string) => request<void>('DELETE', path),
};

/** `?a=1&b=x` from the members that have a value. */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
