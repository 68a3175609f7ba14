import { randomBytes } from 'node:crypto';
import type { Transform } from 'node:stream';
import { Encoder as Base64Encoder } from 'nodemailer/lib/base64';
import MailComposer from 'nodemailer/lib/mail-composer';
import * as mimeFuncs from 'nodemailer/lib/mime-funcs';
import type MimeNode from 'nodemailer/lib/mime-node';
import { Encoder as QpEncoder } from 'nodemailer/lib/qp';
import { memoUpTo } from '../../lru.js';

/** A message ready for the wire: what SMTP's MAIL FROM / RCPT TO say, and the bytes after DATA. */
export interface BuiltMime {
  envelope: { from: string; to: string[] };
  raw: Buffer;
}

/**
 * The MIME message nodemailer would send for these mail options, built synchronously.
 *
 * nodemailer's own path (sendMail with the parts) builds a tree of MIME nodes and streams it:
 * a stream pipeline, an AbortController and several setImmediate turns per node, and a socket
 * write per chunk. That was a quarter of the dispatcher's CPU (docs/performance.md). Here the
 * same tree (MailComposer, so the same headers, boundaries, encodings and line folding) is
 * written into one buffer in one turn, and handed to the pool as `raw`: one socket write.
 *
 * Byte-identical to nodemailer's build (test/channels/mime.test.ts compares them): the headers
 * come from the node's own buildHeaders(), and the body from the same quoted-printable and
 * base64 encoders, fed the whole content as one chunk as nodemailer's content stream does.
 * Only the options Herald uses are supported (string parts, no attachments, no DKIM).
 */
export function buildMime(options: MailOptions): BuiltMime {
  return buildPlain(options) ?? buildWithComposer(options);
}

type MailOptions = ConstructorParameters<typeof MailComposer>[0];

function buildWithComposer(options: MailOptions): BuiltMime {
  // The boundary's random part, drawn as nodemailer draws it (8 random bytes, hex) but from a
  // pool: nodemailer's own would make a system call for each node, used by the root only.
  const root = new MailComposer({ baseBoundary: randomHex8(), ...options }).compile();
  const chunks: Buffer[] = [];
  writeNode(root, chunks);
  // nodemailer ends every message with a line break (its LastNewline stage).
  const last = chunks.at(-1);
  const lastByte = last?.[last.length - 1];
  if (lastByte !== 0x0a) chunks.push(Buffer.from(lastByte === 0x0d ? '\n' : '\r\n'));
  const { from, to } = root.getEnvelope();
  return { envelope: { from: from || '', to }, raw: Buffer.concat(chunks) };
}

const POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomOffset = POOL_BYTES;

/** 8 bytes from a cryptographic random pool, refilled 512 draws at a time; hex. */
function randomHex8(): string {
  if (randomOffset + 8 > randomPool.length) {
    randomPool = randomBytes(POOL_BYTES);
    randomOffset = 0;
  }
  randomOffset += 8;
  return randomPool.toString('hex', randomOffset - 8, randomOffset);
}

/** MimeNode's fields this reads, which its type declarations leave out. */
interface NodeInternals {
  content?: string | Buffer;
  multipart?: string | false;
  boundary?: string;
  childNodes: MimeNode[];
  contentType?: string;
  getTransferEncoding(): string | false;
  buildHeaders(): string;
}

/** What MimeNode.stream() writes for one node: headers, content, then each child between boundaries. */
function writeNode(mimeNode: MimeNode, out: Buffer[]): void {
  const node = mimeNode as unknown as NodeInternals;
  const transferEncoding = node.getTransferEncoding();
  out.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  if (node.content !== undefined && node.content !== '') {
    if (typeof node.content !== 'string' && !Buffer.isBuffer(node.content)) throw new Error('buildMime: only string content');
    const content = Buffer.from(node.content);
    if (transferEncoding === 'quoted-printable') {
      out.push(
        ...encodeAll(
          new QpEncoder({ binary: !/^text\//i.test(node.contentType ?? '') } as ConstructorParameters<typeof QpEncoder>[0]),
          content,
        ),
      );
    } else if (transferEncoding === 'base64') {
      out.push(...encodeAll(new Base64Encoder(), content));
    } else {
      out.push(content);
    }
  }
  if (!node.multipart) return;
  node.childNodes.forEach((child, i) => {
    out.push(Buffer.from(`${i > 0 ? '\r\n' : ''}--${node.boundary}\r\n`));
    writeNode(child, out);
  });
  out.push(Buffer.from(`\r\n--${node.boundary}--\r\n`));
}

/**
 * Runs an encoder over the whole content at once: its transform and flush are synchronous
 * (they call back at once), so calling them directly gives exactly what the stream would emit
 * for one chunk, without a stream's turns.
 */
function encodeAll(encoder: Transform, content: Buffer): Buffer[] {
  const out: Buffer[] = [];
  const internals = encoder as unknown as {
    push(chunk: Buffer | string, encoding?: BufferEncoding): boolean;
    _transform(chunk: Buffer, encoding: string, done: (err?: Error | null) => void): void;
    _flush(done: (err?: Error | null) => void): void;
  };
  internals.push = (chunk, encoding) => {
    out.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : chunk);
    return true;
  };
  const failed = (err?: Error | null) => {
    if (err) throw err;
  };
  internals._transform(content, 'buffer', failed);
  internals._flush(failed);
  return out;
}

/**
 * The usual message, written without a MIME tree: a bare address as To, printable ASCII in the
 * subject, the Message-ID and the extra headers (which then need no encoding), and non-empty
 * parts. Everything a MimeNode would work out per message (header keys normalised on every
 * look-up, addresses parsed, a random draw per node) is either fixed for these inputs or, for
 * the From header, worked out once per sender by nodemailer itself and kept. The bytes are
 * nodemailer's (test/channels/mime.test.ts compares both paths with it); anything else
 * (a display name in To, an accented subject, an empty part ...) answers undefined and goes
 * through buildWithComposer.
 */
export function buildPlain(options: MailOptions): BuiltMime | undefined {
  const { from, to, subject, text, html, messageId, headers, date } = options as {
    from?: unknown;
    to?: unknown;
    subject?: unknown;
    text?: unknown;
    html?: unknown;
    messageId?: unknown;
    headers?: unknown;
    date?: unknown;
  };
  if (typeof from !== 'string' || typeof to !== 'string' || !BARE_ADDRESS.test(to)) return undefined;
  if (typeof subject !== 'string' || !plainValue(subject)) return undefined;
  if (typeof messageId !== 'string' || !MESSAGE_ID.test(messageId)) return undefined;
  if (typeof text !== 'string' || text === '' || (html !== undefined && (typeof html !== 'string' || html === ''))) return undefined;
  if (date !== undefined && !(date instanceof Date)) return undefined;
  const extra = headers === undefined ? [] : Object.entries(headers as Record<string, unknown>);
  if (!extra.every(([key, value]) => HEADER_KEY.test(key) && typeof value === 'string' && plainValue(value))) return undefined;
  const sender = senderOf(from);
  if (!sender) return undefined;
  const lines = extra.map(([key, value]) => mimeFuncs.foldLines(`${key}: ${value}`, 76));
  lines.push(sender.header, `To: ${to}`);
  if (subject !== '') lines.push(mimeFuncs.foldLines(`Subject: ${subject}`, 76));
  lines.push(`Message-ID: ${messageId}`, `Date: ${(date ?? new Date()).toUTCString().replace(/GMT/, '+0000')}`);
  const out: Buffer[] = [];
  if (typeof html !== 'string') {
    const part = encodedPart(text);
    lines.push(`Content-Transfer-Encoding: ${part.encoding}`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8');
    out.push(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), ...part.body);
  } else {
    const baseBoundary = (options as { baseBoundary?: string }).baseBoundary ?? randomHex8();
    if (!/^[0-9a-z]+$/i.test(baseBoundary)) return undefined;
    const boundary = `--_NmP-${baseBoundary}-Part_1`;
    lines.push('MIME-Version: 1.0', `Content-Type: multipart/alternative; boundary="${boundary}"`);
    out.push(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`));
    [
      ['text/plain', text],
      ['text/html', html],
    ].forEach(([type, content], i) => {
      const part = encodedPart(content!);
      out.push(
        Buffer.from(
          `${i > 0 ? '\r\n' : ''}--${boundary}\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: ${part.encoding}\r\n\r\n`,
        ),
        ...part.body,
      );
    });
    out.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  }
  const last = out.at(-1)!;
  const lastByte = last[last.length - 1];
  if (lastByte !== 0x0a) out.push(Buffer.from(lastByte === 0x0d ? '\n' : '\r\n'));
  return { envelope: { from: sender.envelope, to: [to] }, raw: Buffer.concat(out) };
}

/** An address nodemailer writes and puts in the envelope exactly as given (a lower-case ASCII domain). */
const BARE_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9-]+(\.[a-z0-9-]+)*$/;
const MESSAGE_ID = /^<[\x21-\x3b\x3d\x3f-\x7e]+>$/;
/** An extra header nodemailer writes as given: List-* and X-* in its normalised form (no header it treats specially). */
const HEADER_KEY = /^(List|X)(-[A-Z][a-z]*)+$/;

/** Printable ASCII that nodemailer would neither encode (no quote, no `=?`) nor trim. */
function plainValue(value: string): boolean {
  return /^([\x21\x23-\x7e]([\x20\x21\x23-\x7e]*[\x21\x23-\x7e])?)?$/.test(value) && !value.includes('=?');
}

const senders = new Map<string, { header: string; envelope: string } | null>();

/**
 * The From header and envelope sender nodemailer makes of a campaign's `from`, built by it once
 * per distinct value (a handful per process), then reused.
 */
function senderOf(from: string): { header: string; envelope: string } | undefined {
  const sender = memoUpTo(senders, 1000, from, () => {
    const node = new MailComposer({ from, to: 'a@b.c', text: 'x' }).compile();
    const headers = (node as unknown as NodeInternals).buildHeaders().split('\r\n');
    const start = headers.findIndex((line) => line.startsWith('From: '));
    let end = start + 1;
    while (end < headers.length && /^[ \t]/.test(headers[end]!)) end++;
    const envelope = node.getEnvelope().from;
    return start < 0 || !envelope ? null : { header: headers.slice(start, end).join('\r\n'), envelope };
  });
  return sender ?? undefined;
}

/** A text part's transfer encoding as MimeNode chooses it, and its encoded body. */
function encodedPart(content: string): { encoding: string; body: Buffer[] } {
  if (mimeFuncs.isPlainText(content) && !mimeFuncs.hasLongerLines(content, 76)) return { encoding: '7bit', body: [Buffer.from(content)] };
  if (prefersQuotedPrintable(content))
    return {
      encoding: 'quoted-printable',
      body: encodeAll(new QpEncoder({ binary: false } as ConstructorParameters<typeof QpEncoder>[0]), Buffer.from(content)),
    };
  return { encoding: 'base64', body: encodeAll(new Base64Encoder(), Buffer.from(content)) };
}

/** MimeNode's _getTextEncoding: quoted-printable when Latin letters outnumber binary and non-ASCII characters. */
function prefersQuotedPrintable(value: string): boolean {
  let nonLatin = 0;
  let latin = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f) || code >= 0x80) nonLatin++;
    else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++;
  }
  return nonLatin < latin;
}
