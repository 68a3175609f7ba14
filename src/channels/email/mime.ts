import { randomBytes } from 'node:crypto';
import type { Transform } from 'node:stream';
import { Encoder as Base64Encoder } from 'nodemailer/lib/base64';
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import { Encoder as QpEncoder } from 'nodemailer/lib/qp';

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
export function buildMime(options: ConstructorParameters<typeof MailComposer>[0]): BuiltMime {
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
