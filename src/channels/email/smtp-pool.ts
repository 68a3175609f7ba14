import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import { DEFAULT_SMTP_POOL_SIZE } from '../../config.js';
import type { AcceptanceJournal, Accepted } from '../../db/acceptance-journal.js';
import { startThread } from '../../threads.js';
import type { BuiltMime } from './mime.js';
import { sendBuilt } from './pool-send.js';
import type { ThreadNotice, ThreadReply, ThreadSend } from './smtp-thread.js';

/** How long a closing thread gets to say goodbye to the server before it is stopped. */
const CLOSE_GRACE_MS = 5_000;

/**
 * How often the thread hears which notes it may forget: one delete for all of them (an entry
 * left a little longer costs nothing; close() tells what is left).
 */
const FORGET_EVERY_MS = 100;

/** Where the SMTP pool runs: the two below answer alike (the server's accepted list, or nodemailer's error fields). */
export interface SmtpPool {
  send(built: BuiltMime, messageId: string, sendId: string): Promise<{ accepted: string[] }>;
  close(): Promise<void>;
}

/** The SMTP pool on the caller's own event loop (SMTP_THREAD=false). */
export class SmtpLoopPool implements SmtpPool {
  readonly #transport;

  constructor(options: Record<string, unknown>) {
    this.#transport = nodemailer.createTransport(options);
  }

  async send(built: BuiltMime, messageId: string, _sendId: string): Promise<{ accepted: string[] }> {
    const info = await sendBuilt(this.#transport, built, messageId);
    return { accepted: info.accepted.map(String) };
  }

  async close(): Promise<void> {
    this.#transport.close();
  }
}

/**
 * The SMTP pool on a thread of its own (smtp-thread.ts), so its sockets and the server's
 * replies are read while the dispatcher's thread renders, claims and commits
 * (docs/decisions.md, "The SMTP pool on its own thread"). The thread starts on the first send
 * (a process that sends no email starts none) and again after it ended. A send the thread held
 * when it ended fails as a lost connection (`ECONNECTION`: temporary, retried). The thread keeps
 * the process alive only while it holds a send.
 *
 * With a journal (db/acceptance-journal.ts; SQLite, smtp.ts) the thread notes each
 * acceptance itself and takes every message at once; without one it holds at most one per
 * connection (see #handOver).
 */
export class SmtpThreadPool implements SmtpPool {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, { resolve: (accepted: string[]) => void; reject: (err: Error) => void }>();
  /** Messages not yet handed to the thread (see #handOver). */
  readonly #waiting: ThreadSend[] = [];
  #inThread = 0;
  readonly #limit: number;
  #nextId = 0;
  /** Sends whose outcomes are written, told to the thread in one notice every FORGET_EVERY_MS. */
  #forgotten: string[] = [];

  /** `journal`: this thread's handle on the acceptance journal, which the pool closes with itself. */
  constructor(
    private readonly options: Record<string, unknown>,
    private readonly journal?: AcceptanceJournal,
  ) {
    const connections = typeof options.maxConnections === 'number' ? options.maxConnections : DEFAULT_SMTP_POOL_SIZE;
    this.#limit = journal === undefined ? connections : Number.POSITIVE_INFINITY;
  }

  /** Hands the message to the thread's pool: the server's accepted recipients, or its error (nodemailer's fields). */
  send(built: BuiltMime, messageId: string, sendId: string): Promise<{ accepted: string[] }> {
    const worker = this.#worker ?? this.#start();
    const id = this.#nextId++;
    // A copy of its own, moved to the thread: the built buffer may share Node's allocation pool.
    const raw = new Uint8Array(built.raw);
    if (this.#pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve: (accepted) => resolve({ accepted }), reject });
      this.#waiting.push({ id, sendId, envelope: built.envelope, raw, messageId });
      this.#handOver(worker);
    });
  }

  /**
   * Without a journal the thread gets a message only while it holds fewer than one per
   * connection, and a slot frees when this thread has read the answer. So, as with the pool on
   * this loop, a crash can find at most one accepted message per connection whose outcome is not
   * yet written: a thread with its own queue would go on delivering while this loop is busy and
   * leave up to the dispatcher's whole batch accepted and unrecorded (test/sends/crash.test.ts).
   * With the journal those are noted by the thread, and it takes everything at once.
   */
  #handOver(worker: Worker): void {
    while (this.#inThread < this.#limit && this.#waiting.length > 0) {
      const message = this.#waiting.shift()!;
      this.#inThread++;
      worker.postMessage(message, [message.raw.buffer as ArrayBuffer]);
    }
  }

  /**
   * Of these sends (claimed again), those whose message the server accepted before, from the
   * journal: a crash came between the acceptance and the outcome's write. Empty without a journal.
   */
  deliveredAmong(sendIds: string[]): Map<string, Accepted> {
    if (this.journal === undefined || sendIds.length === 0) return new Map();
    return this.journal.among(sendIds);
  }

  /** The send's outcome is written: its journal entry can go (told to the thread, which writes the journal, in batches). */
  recorded(sendId: string): void {
    if (this.journal === undefined) return;
    this.#forgotten.push(sendId);
    if (this.#forgotten.length === 1) setTimeout(() => this.#tellForgotten(), FORGET_EVERY_MS).unref();
  }

  #tellForgotten(): void {
    const forget = this.#forgotten;
    this.#forgotten = [];
    if (forget.length > 0 && this.#worker) this.#worker.postMessage({ forget } satisfies ThreadNotice);
    // No thread to tell (it ended): the entries stay, harmless, until a thread prunes them (db/acceptance-journal.ts).
  }

  /** Closes the pool's connections and ends the thread (after the last send), and the journal. */
  async close(): Promise<void> {
    const worker = this.#worker;
    if (worker) await this.#end(worker);
    this.journal?.close();
  }

  async #end(worker: Worker): Promise<void> {
    this.#tellForgotten();
    this.#worker = undefined;
    const exited = once(worker, 'exit');
    worker.postMessage({ close: true } satisfies ThreadNotice);
    const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(timer);
    // Called after the last send; anything still waiting never reached the server.
    this.#failAll('smtp thread closed');
  }

  #start(): Worker {
    const worker = startThread(import.meta.url, './smtp-thread', { options: this.options, journal: this.journal?.path });
    worker.unref();
    worker.on('message', (reply: ThreadReply) => this.#settle(worker, reply));
    worker.on('error', (err) => this.#ended(worker, err.message));
    worker.on('exit', (code) => this.#ended(worker, `exit code ${code}`));
    this.#worker = worker;
    return worker;
  }

  #settle(worker: Worker, reply: ThreadReply): void {
    if ('ended' in reply) {
      this.#ended(worker, reply.ended);
      return;
    }
    const waiting = this.#pending.get(reply.id);
    if (!waiting) return;
    this.#pending.delete(reply.id);
    this.#inThread--;
    this.#handOver(worker);
    if (this.#pending.size === 0) worker.unref();
    if ('accepted' in reply) waiting.resolve(reply.accepted);
    else waiting.reject(Object.assign(new Error(reply.error.message), reply.error));
  }

  /**
   * The thread is gone: what it held or was to hold failed like a dropped connection; the next
   * send starts another. Only the current thread's end counts: a thread already replaced or
   * closed holds none of the sends waiting now.
   */
  #ended(worker: Worker, why: string): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#failAll(`smtp thread ended (${why})`);
  }

  #failAll(message: string): void {
    const held = [...this.#pending.values()];
    this.#pending.clear();
    this.#waiting.length = 0;
    this.#inThread = 0;
    for (const { reject } of held) reject(Object.assign(new Error(message), { code: 'ECONNECTION' }));
  }
}
