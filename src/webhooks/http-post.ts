import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPublicAddress } from '../net/ssrf.js';

export interface PostOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Aborts the request (worker shutdown). */
  signal?: AbortSignal;
}

/** What one attempt got: an HTTP status, or (no answer) an error text fit for the attempt log. */
export type PostOutcome = { statusCode: number; error: null } | { statusCode: null; error: string };

const MAX_ERROR_LENGTH = 500;

/**
 * POSTs one webhook body. Redirects are not followed (a 3xx is an answer like any non-2xx), so
 * a receiver cannot bounce the request to another host. The connection is SSRF-guarded: a
 * host name goes through guardedLookup (the address checked is the one connected to), and an
 * IP literal, which Node connects to without any lookup, is checked here.
 */
export function postWebhook(rawUrl: string, body: string, headers: Record<string, string>, options: PostOptions): Promise<PostOutcome> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return Promise.resolve(failure('invalid webhook URL'));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve(failure('webhook URLs must be http or https'));
  // WHATWG URL parsing has already turned `0x7f.1`, `2130706433` and the like into dotted form.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !options.allowPrivate && !isPublicAddress(host)) {
    return Promise.resolve(failure(`refused to connect to ${host}: private or loopback address (WEBHOOK_ALLOW_PRIVATE is off)`));
  }

  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const req = send(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(options.allowPrivate),
        // A fresh connection per attempt: a pooled socket would outlive the worker and skip the lookup check.
        agent: false,
        signal: options.signal,
      },
      (res) => {
        // The status is the answer; the body is drained and dropped (never stored: it is the receiver's).
        settle({ statusCode: res.statusCode ?? 0, error: null });
        res.on('error', () => undefined);
        res.resume();
      },
    );
    // One deadline for everything: DNS, connect, TLS, headers (and a body that never ends).
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) => settle(failure(describe(err))));
    req.end(body);
  });
}

function failure(error: string): PostOutcome {
  return { statusCode: null, error: error.slice(0, MAX_ERROR_LENGTH) };
}

/** Node's network errors name the address and port, never the path or query (which may hold a token). */
function describe(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ABORT_ERR') return 'aborted: worker shutting down';
  return err.message || code || 'network error';
}
