import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake answered as the Cloud API (successfully or with an API error). */
export interface CloudApiRequest {
  phoneNumberId: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  /** HTTP status the fake answered with. */
  status: number;
  /** The wamid given out, for accepted messages. */
  wamid?: string;
}

interface Template {
  language: string;
  bodyParams: number;
}

/**
 * A local stand-in for the WhatsApp Cloud API that checks each request the way the real one
 * would: path `/<version>/<phone-number-id>/messages`, the phone number's Bearer token, a JSON
 * body with a registered template in its language and the template's number of body
 * parameters. Any other path or method is recorded in `unexpected` (assert it stays empty).
 */
export class FakeWhatsAppCloudApi {
  readonly requests: CloudApiRequest[] = [];
  readonly unexpected: { method: string; path: string }[] = [];
  private readonly phoneNumbers = new Map<string, string>();
  private readonly templates = new Map<string, Template>();
  private failures: { remaining: number; status: number; code: number; message: string } | undefined;
  private stalls = 0;

  private constructor(
    private readonly server: Server,
    readonly version: string,
  ) {}

  static async start(version = 'v21.0'): Promise<FakeWhatsAppCloudApi> {
    let fake: FakeWhatsAppCloudApi | undefined;
    const server = createServer((req, res) => void fake!.handle(req, res));
    fake = new FakeWhatsAppCloudApi(server, version);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** WHATSAPP_API_URL for the code under test: base address with the version. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/${this.version}`;
  }

  /** The requests that were accepted (a message id was given out). */
  get accepted(): CloudApiRequest[] {
    return this.requests.filter((r) => r.wamid !== undefined);
  }

  addPhoneNumber(phoneNumberId: string, token: string): void {
    this.phoneNumbers.set(phoneNumberId, token);
  }

  addTemplate(name: string, language: string, bodyParams: number): void {
    this.templates.set(name, { language, bodyParams });
  }

  /** The next n valid requests answer this HTTP status and Cloud API error code. */
  failNext(n: number, status: number, code: number, message = `(#${code}) simulated error`): void {
    this.failures = { remaining: n, status, code, message };
  }

  /** The next n requests get no answer at all (for timeouts). */
  stallNext(n: number): void {
    this.stalls = n;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '').split('?')[0]!;
    const match = new RegExp(`^/${this.version.replace('.', '\\.')}/([^/]+)/messages$`).exec(path);
    if (req.method !== 'POST' || !match) {
      this.unexpected.push({ method: req.method ?? '', path });
      return send(res, 404, apiError(2500, 'Unknown path components', 'OAuthException'));
    }
    if (this.stalls > 0) {
      this.stalls--;
      return; // never answers; close() ends the socket
    }
    const phoneNumberId = decodeURIComponent(match[1]!);
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const [status, answer, wamid] = this.answer(phoneNumberId, req, body);
    this.requests.push({ phoneNumberId, headers: req.headers, body, status, wamid });
    send(res, status, answer);
  }

  private answer(phoneNumberId: string, req: IncomingMessage, body: any): [number, object, string?] {
    const token = this.phoneNumbers.get(phoneNumberId);
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    if (!auth) return [401, apiError(190, 'Invalid OAuth access token - Cannot parse access token', 'OAuthException')];
    if (token === undefined) {
      return [
        400,
        apiError(
          100,
          `Unsupported post request. Object with ID '${phoneNumberId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
          'GraphMethodException',
        ),
      ];
    }
    if (auth[1] !== token) return [401, apiError(190, 'Error validating access token: The session is invalid.', 'OAuthException')];
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '') || body === undefined || typeof body !== 'object') {
      return [400, apiError(100, '(#100) The request body must be JSON')];
    }
    if (body.messaging_product !== 'whatsapp') return [400, apiError(100, '(#100) The parameter messaging_product is required.')];
    if (body.recipient_type !== undefined && body.recipient_type !== 'individual')
      return [400, apiError(100, '(#100) Invalid parameter recipient_type')];
    if (typeof body.to !== 'string' || !/^\d{7,15}$/.test(body.to)) return [400, apiError(100, '(#100) Invalid parameter to')];
    if (body.type !== 'template') return [400, apiError(100, '(#100) This fake only takes template messages')];
    const template = this.templates.get(body.template?.name);
    if (!template || body.template?.language?.code !== template.language) {
      return [404, apiError(132001, '(#132001) Template name does not exist in the translation')];
    }
    const components: any[] = Array.isArray(body.template.components) ? body.template.components : [];
    const params: any[] = components.filter((c) => c?.type === 'body').flatMap((c) => (Array.isArray(c.parameters) ? c.parameters : []));
    if (params.length !== template.bodyParams) {
      return [400, apiError(132000, '(#132000) Number of parameters does not match the expected number of params')];
    }
    if (params.some((p) => p?.type !== 'text' || typeof p.text !== 'string' || p.text === '')) {
      return [400, apiError(131008, '(#131008) Required parameter is missing')];
    }
    if (this.failures && this.failures.remaining > 0) {
      this.failures.remaining--;
      return [this.failures.status, apiError(this.failures.code, this.failures.message)];
    }
    const wamid = `wamid.${randomBytes(18).toString('base64url')}`;
    return [200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: wamid }] }, wamid];
  }
}

function apiError(code: number, message: string, type = 'OAuthException') {
  return {
    error: {
      message,
      type,
      code,
      error_data: { messaging_product: 'whatsapp', details: message },
      fbtrace_id: randomBytes(9).toString('base64url'),
    },
  };
}

function send(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
