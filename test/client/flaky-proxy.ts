import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The network between the client and a real Herald: an HTTP proxy that forwards each request
 * unchanged, except those it is told to break first. It records every request it receives (method,
 * URL, headers), so a test can check what went over the wire on each attempt.
 *
 * Faults, taken in order, one per incoming request (then everything passes):
 * - 'reset': the connection is destroyed before any answer (the client sees a network error);
 * - a number: that status is answered with an error body, without reaching Herald.
 */
export type Fault = 'reset' | number;

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** What the proxy did: 'forwarded', 'reset', or the status it answered itself. */
  outcome: 'forwarded' | Fault;
}

export interface FlakyProxy {
  url: string;
  seen: SeenRequest[];
  /** Breaks the next requests, in order. */
  fail(...faults: Fault[]): void;
  /** Forgets what it saw and any faults not used yet. */
  reset(): void;
  close(): Promise<void>;
}

export async function startFlakyProxy(target: string): Promise<FlakyProxy> {
  const upstream = new URL(target);
  const seen: SeenRequest[] = [];
  let faults: Fault[] = [];
  const server = createServer((req, res) => {
    const fault = faults.shift();
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, outcome: fault ?? 'forwarded' });
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (typeof fault === 'number') {
      req.resume();
      res.writeHead(fault, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ statusCode: fault, error: 'Proxy Error', message: `the proxy answered ${fault}` }));
      return;
    }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    fail: (...next) => {
      faults.push(...next);
    },
    reset: () => {
      seen.length = 0;
      faults = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
