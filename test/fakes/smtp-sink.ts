import type { AddressInfo } from 'node:net';
import { type AddressObject, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

/** One message the sink accepted, parsed the way a mail client would read it. */
export interface ReceivedEmail {
  /** SMTP envelope: MAIL FROM and RCPT TO. */
  envelope: { from: string; to: string[] };
  /** Header From / To as written, e.g. `Acme <news@acme.test>`. */
  from: string;
  to: string;
  subject: string;
  html: string | null;
  text: string | null;
  /** Header name (lower case) -> unfolded raw value, e.g. headers['list-unsubscribe']. */
  headers: Record<string, string>;
  messageId: string | null;
  /** Date.now() when the sink accepted it (just before its 250 reply). */
  receivedAt: number;
  /** The SMTP session (one per client connection) it came on. */
  sessionId: string;
}

/**
 * A local SMTP server for tests (the outside world's mail server). It accepts everything,
 * except the next `failNext(n, code)` messages, which it refuses with that reply code after
 * reading them. `stop()` and `restart()` take it down and bring it back on the same port.
 */
export class SmtpSink {
  readonly messages: ReceivedEmail[] = [];
  /** How many messages were refused by failNext. */
  refused = 0;
  private server: SMTPServer;
  private failures: { remaining: number; code: number; message: string } | undefined;
  private stalledUntil = 0;
  private waiters: { count: number; resolve: () => void }[] = [];
  /** Mailboxes that do not exist: RCPT TO for them is refused with this reply (a hard bounce). */
  private readonly unknownRecipients = new Map<string, { code: number; message: string }>();

  private constructor(
    readonly port: number,
    server: SMTPServer,
  ) {
    this.server = server;
  }

  static async start(): Promise<SmtpSink> {
    let sink: SmtpSink | undefined;
    const server = createServer(
      (stream, session) => sink!.receive(stream, session),
      (address) => sink!.recipientRefusal(address),
    );
    const port = await listen(server, 0);
    sink = new SmtpSink(port, server);
    return sink;
  }

  /** The SMTP_URL that reaches this sink. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Refuse the next n messages with this SMTP reply code (4xx transient, 5xx permanent). */
  failNext(n: number, code: number, message = code >= 500 ? 'Message rejected' : 'Try again later'): void {
    this.failures = { remaining: n, code, message };
  }

  /** Refuse RCPT TO for this address from now on (the mailbox does not exist). */
  refuseRecipient(address: string, code = 550, message = '5.1.1 No such user here'): void {
    this.unknownRecipients.set(address.toLowerCase(), { code, message });
  }

  /** The mailbox exists again. */
  acceptRecipient(address: string): void {
    this.unknownRecipients.delete(address.toLowerCase());
  }

  /** @internal The refusal for RCPT TO of this address, if any. */
  recipientRefusal(address: string): { code: number; message: string } | undefined {
    return this.unknownRecipients.get(address.toLowerCase());
  }

  /**
   * A slow server: every message that arrives in the next `ms` milliseconds is held (read, not
   * answered) until that time has passed, then accepted.
   */
  stallFor(ms: number): void {
    this.stalledUntil = Date.now() + ms;
  }

  /** Resolves with the messages once `count` have arrived in total; rejects after the timeout. */
  waitFor(count: number, timeoutMs = 5000): Promise<ReceivedEmail[]> {
    if (this.messages.length >= count) return Promise.resolve(this.messages.slice());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`smtp sink: ${this.messages.length} of ${count} messages after ${timeoutMs} ms`)),
        timeoutMs,
      );
      const done = () => {
        clearTimeout(timer);
        resolve(this.messages.slice());
      };
      this.waiters.push({ count, resolve: done });
    });
  }

  /**
   * Resolves once a message to each of `addresses` has arrived, whatever else arrived meanwhile (a
   * worker on a shared PostgreSQL database also delivers what other test files left due); rejects
   * after the timeout, naming how many are still missing.
   */
  async waitForRecipients(addresses: readonly string[], timeoutMs = 5000): Promise<ReceivedEmail[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const delivered = new Set(this.messages.flatMap((m) => m.envelope.to));
      const missing = addresses.filter((a) => !delivered.has(a));
      if (missing.length === 0) return this.messages.slice();
      if (Date.now() > deadline)
        throw new Error(`smtp sink: ${missing.length} of ${addresses.length} recipients missing after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Closes the port and drops open connections (the server is "down"). */
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  async restart(): Promise<void> {
    this.server = createServer(
      (stream, session) => this.receive(stream, session),
      (address) => this.recipientRefusal(address),
    );
    await listen(this.server, this.port);
  }

  close(): Promise<void> {
    return this.stop();
  }

  private async receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<void> {
    const parsed = await simpleParser(stream);
    const stall = this.stalledUntil - Date.now();
    if (stall > 0) await new Promise((resolve) => setTimeout(resolve, stall));
    if (this.failures && this.failures.remaining > 0) {
      this.failures.remaining--;
      this.refused++;
      throw Object.assign(new Error(this.failures.message), { responseCode: this.failures.code });
    }
    const headers: Record<string, string> = {};
    for (const { key, line } of parsed.headerLines)
      headers[key] = line
        .slice(line.indexOf(':') + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim();
    this.messages.push({
      envelope: {
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        to: session.envelope.rcptTo.map((r) => r.address),
      },
      from: addressText(parsed.from),
      to: addressText(parsed.to),
      subject: parsed.subject ?? '',
      html: typeof parsed.html === 'string' ? parsed.html : null,
      text: parsed.text ?? null,
      headers,
      messageId: parsed.messageId ?? null,
      receivedAt: Date.now(),
      sessionId: session.id,
    });
    const ready = this.waiters.filter((w) => this.messages.length >= w.count);
    this.waiters = this.waiters.filter((w) => this.messages.length < w.count);
    for (const w of ready) w.resolve();
  }
}

function createServer(
  onMessage: (stream: SMTPServerDataStream, session: SMTPServerSession) => Promise<void>,
  refusal: (address: string) => { code: number; message: string } | undefined,
): SMTPServer {
  const server = new SMTPServer({
    onRcptTo(address, _session, callback) {
      const refused = refusal(address.address);
      if (refused) callback(Object.assign(new Error(refused.message), { responseCode: refused.code }));
      else callback();
    },
    // The built-in certificate has expired (design.md): plain SMTP only.
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    // Accept whatever login the client offers, over plain text: only loopback is involved.
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username });
    },
    logger: false,
    // stop() should take the server down now, not after the default 30 s grace period.
    closeTimeout: 10,
    onData(stream, session, callback) {
      onMessage(stream, session).then(
        () => callback(),
        (err: Error) => {
          // Whatever was not read yet must be drained before the reply is sent.
          stream.resume();
          stream.once('end', () => callback(err));
          if (stream.readableEnded) callback(err);
        },
      );
    },
  });
  // A client that dies mid-conversation (a SIGKILLed worker) resets its connection: for a mail
  // server that is an ordinary event, not a crash of the test process.
  server.on('error', () => undefined);
  return server;
}

function listen(server: SMTPServer, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.server.address() as AddressInfo).port);
    });
  });
}

function addressText(value: AddressObject | AddressObject[] | undefined): string {
  if (!value) return '';
  return (Array.isArray(value) ? value : [value]).map((a) => a.text).join(', ');
}
