import type { Worker } from 'node:worker_threads';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { startThread } from '../threads.js';
import type { ReadReply, ReadRequest } from './reader-thread.js';
import type { Database } from './schema.js';

/**
 * Long reads off the event loop, on SQLite (connect.ts: `db.reads`). SQLite's one connection
 * runs each statement on the event loop, so a read of a whole table (a segment counted on a
 * large account, the queue's depth for /metrics) held up every request and every send for as
 * long as it ran: half a second for the segment list of a 100,000-contact account. Here it runs
 * on a reader thread, each with a read-only connection of its own: the loop goes on, and the
 * list's counts run side by side, one per core (READER_THREADS).
 *
 * A read here sees what is committed, not a write of the caller's own still in the commit
 * queue: it is for reads that need no transaction and follow no write of their own.
 */
export const READER_THREADS = 2;

interface Reader {
  worker: Worker;
  /** The read it runs, if any: a reader runs one at a time, so the next waiting read goes to whichever is free first. */
  running?: Waiting;
}

interface Waiting {
  request: ReadRequest;
  resolve: (rows: unknown[]) => void;
  reject: (err: Error) => void;
}

export class ReaderThreads {
  #readers: Reader[] = [];
  readonly #waiting: Waiting[] = [];
  #nextId = 0;
  #closed = false;

  constructor(private readonly path: string) {}

  /** The statement's rows, from the first reader free (one is started while there are fewer than READER_THREADS). */
  run(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    if (this.#closed) return Promise.reject(new Error('the database is closed'));
    return new Promise((resolve, reject) => {
      this.#waiting.push({ request: { id: this.#nextId++, sql, parameters }, resolve, reject });
      this.#handOut();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const readers = this.#readers;
    this.#readers = [];
    await Promise.all(readers.map((reader) => reader.worker.terminate()));
    this.#fail([...readers.flatMap((reader) => reader.running ?? []), ...this.#waiting.splice(0)], 'the database is closed');
  }

  /** Each free reader takes the next waiting read. */
  #handOut(): void {
    // Closed: an answer arriving while the threads are stopped starts none again.
    while (!this.#closed && this.#waiting.length > 0) {
      const reader =
        this.#readers.find((r) => r.running === undefined) ?? (this.#readers.length < READER_THREADS ? this.#start() : undefined);
      if (!reader) return;
      const next = this.#waiting.shift()!;
      reader.running = next;
      // Kept alive only while it runs a read.
      reader.worker.ref();
      reader.worker.postMessage(next.request);
    }
  }

  #start(): Reader {
    const worker = startThread(import.meta.url, './reader-thread', { path: this.path });
    const reader: Reader = { worker };
    worker.on('message', (reply: ReadReply) => this.#answer(reader, reply));
    worker.on('error', (err) => this.#ended(reader, err.message));
    worker.on('exit', (code) => this.#ended(reader, `exit code ${code}`));
    this.#readers.push(reader);
    return reader;
  }

  #answer(reader: Reader, reply: ReadReply): void {
    const done = reader.running;
    if (done?.request.id !== reply.id) return;
    reader.running = undefined;
    reader.worker.unref();
    this.#handOut();
    if ('rows' in reply) done.resolve(reply.rows);
    else done.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
  }

  /** A reader that ended fails the read it ran; the next read starts another. */
  #ended(reader: Reader, why: string): void {
    if (!this.#readers.includes(reader)) return;
    this.#readers = this.#readers.filter((r) => r !== reader);
    this.#fail(reader.running ? [reader.running] : [], `reader thread ended (${why})`);
    this.#handOut();
  }

  #fail(reads: Waiting[], message: string): void {
    for (const { reject } of reads) reject(new Error(message));
  }
}

/** A Kysely whose statements run on the reader threads: SQLite's dialect, without transactions. */
export function offLoopKysely(readers: ReaderThreads): Kysely<Database> {
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      return { rows: (await readers.run(query.sql, query.parameters)) as R[] };
    },
    streamQuery() {
      throw new Error('off-loop reads do not stream');
    },
  };
  const noTransactions = () => Promise.reject(new Error('off-loop reads run no transactions: use db.kysely'));
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: noTransactions,
    commitTransaction: noTransactions,
    rollbackTransaction: noTransactions,
    releaseConnection: async () => undefined,
    destroy: () => readers.close(),
  };
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createQueryCompiler: () => new SqliteQueryCompiler(),
      createIntrospector: (db) => new SqliteIntrospector(db),
    },
  });
}
