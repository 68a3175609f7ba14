import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import type { BuiltMime } from './mime.js';
import { sendBuilt } from './pool-send.js';

/**
 * The SMTP pool's own thread (smtp-pool.ts starts it): nodemailer's pooled transport,
 * its sockets and its replies, off the dispatcher's event loop. It receives messages already
 * built and answers each with the server's accepted list or the error's fields.
 */
export interface ThreadSend {
  id: number;
  envelope: BuiltMime['envelope'];
  raw: Uint8Array;
  messageId: string;
}

/** The fields of a nodemailer error that smtpFailure reads (an Error's own fields do not cross threads). */
export interface ThreadError {
  message: string;
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  originalCode?: string;
}

/** A send's answer, or the thread ending for a reason of its own. */
export type ThreadReply = { id: number; accepted: string[] } | { id: number; error: ThreadError } | { ended: string };

const port = parentPort;
if (port) {
  const transport = startTransport(port);
  port.on('message', (message: ThreadSend | { close: true }) => {
    if ('close' in message) {
      transport.close();
      port.close();
      return;
    }
    const raw = Buffer.from(message.raw.buffer, message.raw.byteOffset, message.raw.byteLength);
    sendBuilt(transport, { envelope: message.envelope, raw }, message.messageId).then(
      (info) => port.postMessage({ id: message.id, accepted: info.accepted.map(String) } satisfies ThreadReply),
      (err: ThreadError) => {
        const { message: text, code, responseCode, response, command, originalCode } = err;
        port.postMessage({
          id: message.id,
          error: { message: text, code, responseCode, response, command, originalCode },
        } satisfies ThreadReply);
      },
    );
  });
}

/** The pool, or the thread's end with the reason said (options nodemailer refuses: config.ts checks SMTP_URL first). */
function startTransport(port: MessagePort) {
  try {
    return nodemailer.createTransport(workerData.options);
  } catch (err) {
    port.postMessage({ ended: (err as Error).message } satisfies ThreadReply);
    process.exit(1);
  }
}
