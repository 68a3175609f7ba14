import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  method: string;
  /** Path and query as requested. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body bytes, as signed. */
  body: Buffer;
}

export interface ProgrammedResponse {
  status: number;
  /** Wait this long before answering (longer than the worker's timeout forces a timeout). */
  delayMs?: number;
  headers?: Record<string, string>;
}

/**
 * A customer's webhook endpoint on 127.0.0.1: records every request and answers from a
 * programmed sequence (then 200). The worker reaches it only with WEBHOOK_ALLOW_PRIVATE.
 */
export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  private readonly queue: ProgrammedResponse[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        receiver.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        const next = receiver.queue.shift() ?? { status: 200 };
        const answer = () => {
          if (res.destroyed) return;
          res.writeHead(next.status, { 'content-type': 'text/plain', ...next.headers }).end(`status ${next.status}`);
        };
        if (!next.delayMs) return answer();
        const timer = setTimeout(() => {
          receiver.timers.delete(timer);
          answer();
        }, next.delayMs);
        receiver.timers.add(timer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** A URL on this receiver; `host` lets a test use a name (localhost) instead of the IP. */
  url(path = '/hook', host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** The next requests get these answers, in order; after them, 200. */
  respondWith(...responses: Array<number | ProgrammedResponse>): void {
    this.queue.push(...responses.map((r) => (typeof r === 'number' ? { status: r } : r)));
  }

  /** Requests whose webhook-id header is the given one. */
  byMessageId(id: string): ReceivedWebhook[] {
    return this.requests.filter((r) => r.headers['webhook-id'] === id);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
