import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import { AcceptanceJournal, JOURNAL_KEEP_MS } from '../../db/acceptance-journal.js';
import type { BuiltMime } from './mime.js';
import { sendBuilt } from './pool-send.js';

/**
 * The SMTP pool's own thread (smtp-pool.ts starts it): nodemailer's pooled transport,
 * its sockets and its replies, off the dispatcher's event loop. It receives messages already
 * built and answers each with the server's accepted list or the error's fields. Given a
 * journal (workerData.journal, a path), it notes each acceptance there before answering
 * (db/acceptance-journal.ts).
 */
export interface ThreadSend {
  id: number;
  /** The send's id, for the journal. */
  sendId: string;
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

/** What the thread is told besides messages: sends whose outcomes are written, and the end. */
export type ThreadNotice = { forget: string[] } | { close: true };

const port = parentPort;
if (port) {
  const transport = startTransport(port);
  const journal = openJournal(port);
  port.on('message', (message: ThreadSend | ThreadNotice) => {
    if ('forget' in message) {
      journal?.forget(message.forget);
      return;
    }
    if ('close' in message) {
      transport.close();
      journal?.close();
      port.close();
      return;
    }
    const raw = Buffer.from(message.raw.buffer, message.raw.byteOffset, message.raw.byteLength);
    sendBuilt(transport, { envelope: message.envelope, raw }, message.messageId).then(
      (info) => {
        const accepted = info.accepted.map(String);
        if (journal) noteThenAnswer(journal, port, message, accepted);
        else port.postMessage({ id: message.id, accepted } satisfies ThreadReply);
      },
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

/** Acceptances read in this turn of the thread's loop, not yet noted. */
let unnoted: { message: ThreadSend; accepted: string[] }[] = [];

/**
 * Noted before the answer leaves: from then on a crash does not send the message again. The
 * replies read in one turn of the loop are noted in one transaction (one WAL commit), at the
 * end of that turn, and then answered.
 */
function noteThenAnswer(journal: AcceptanceJournal, port: MessagePort, message: ThreadSend, accepted: string[]): void {
  unnoted.push({ message, accepted });
  if (unnoted.length > 1) return;
  setImmediate(() => {
    const batch = unnoted;
    unnoted = [];
    note(journal, batch);
    for (const { message, accepted } of batch) port.postMessage({ id: message.id, accepted } satisfies ThreadReply);
  });
}

/**
 * The notes. Notes that cannot be written (a full disk) do not hold the answers up: those sends
 * are then as safe as without a journal, recorded when their answers are read.
 */
function note(journal: AcceptanceJournal, batch: typeof unnoted): void {
  try {
    journal.add(
      batch.map(({ message, accepted }) => ({
        sendId: message.sendId,
        to: message.envelope.to[0] ?? '',
        messageId: message.messageId,
        delivered: accepted.length > 0,
        acceptedAt: Date.now(),
      })),
    );
  } catch {
    // See above.
  }
}

/** The journal when one is asked for (smtp-pool.ts); the thread's end, with the reason, when it cannot be opened. */
function openJournal(port: MessagePort): AcceptanceJournal | undefined {
  if (typeof workerData.journal !== 'string') return undefined;
  try {
    const journal = new AcceptanceJournal(workerData.journal);
    journal.prune(Date.now() - JOURNAL_KEEP_MS);
    return journal;
  } catch (err) {
    port.postMessage({ ended: `acceptance journal: ${(err as Error).message}` } satisfies ThreadReply);
    process.exit(1);
  }
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
