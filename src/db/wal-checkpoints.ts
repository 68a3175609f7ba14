import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/**
 * SQLite's WAL checkpoints on a thread of their own, with a connection of their own (issue 9).
 *
 * By default the connection that commits runs a checkpoint whenever the WAL passes 1,000 pages
 * (`wal_autocheckpoint`): it copies the WAL's pages into the database file and fsyncs the WAL and
 * the database file, all inside that COMMIT, on the event loop. In a send burst that was a
 * commit of 5–18 ms every 30 or so (about 200 ms of stopped event loop per 4,000 sends, during
 * which no SMTP answer is read and no outcome written). Here the main connection's
 * autocheckpoint is off and a worker thread runs `wal_checkpoint(PASSIVE)` every CHECKPOINT_EVERY_MS.
 *
 * Durability (docs/decisions.md, SQLite checkpoints off the event loop): a checkpoint is SQLite's
 * own operation whichever connection of the file runs it; it copies committed frames only, syncs
 * the WAL before writing the database file and the database file before it marks the frames
 * copied, and the WAL is overwritten only after that. A commit's durability does not depend on
 * checkpoints (it is the WAL's sync: db/wal-sync.ts). A PASSIVE checkpoint takes no lock that
 * a writer or reader waits for. If the thread fails, the main connection checkpoints by itself
 * again, as before.
 */
export class WalCheckpoints {
  private worker: Worker | undefined;
  private closing = false;

  constructor(
    private readonly path: string,
    private readonly file: SqliteDatabase.Database,
  ) {}

  /** Starts the thread and turns the main connection's own checkpoints off. */
  start(): void {
    if (this.worker) return;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // The thread needs none of the parent's loaders (tsx in development): plain CommonJS.
      execArgv: [],
      workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), path: this.path, everyMs: CHECKPOINT_EVERY_MS },
    });
    // Never what keeps the process alive; a failed thread gives the checkpoints back.
    worker.unref();
    worker.on('message', () => this.fallBack());
    worker.on('error', () => this.fallBack());
    worker.on('exit', () => this.fallBack());
    this.worker = worker;
    this.file.pragma('wal_autocheckpoint = 0');
  }

  /** Stops the thread (closing its connection), before the main connection closes. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.closing = true;
    const exited = once(worker, 'exit');
    // Held while it closes its connection, so that the process waits for that.
    worker.ref();
    worker.postMessage('close');
    await exited;
    this.worker = undefined;
  }

  /** The thread is gone (or reported an error): the main connection checkpoints by itself again. */
  private fallBack(): void {
    if (this.closing || !this.worker) return;
    const worker = this.worker;
    this.worker = undefined;
    void worker.terminate();
    if (this.file.open) this.file.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
  }
}

/**
 * How often the thread checkpoints. At a send burst's write rate about as often as the
 * 1,000-page autocheckpoint did (8–30 MB of WAL per second), and a checkpoint with nothing to
 * copy costs a few microseconds, no sync.
 */
const CHECKPOINT_EVERY_MS = 100;

const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

/**
 * The thread (CommonJS, evaluated): its own connection of the file. `synchronous = FULL` on it
 * makes its checkpoints sync the WAL and the database file (as the main connection's did). A
 * PASSIVE checkpoint that meets another one (SQLITE_BUSY) just waits for the next tick; any other
 * error is reported, and the main connection takes checkpoints back.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = FULL');
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch (err) {
    if (err && err.code === 'SQLITE_BUSY') return;
    clearInterval(timer);
    parentPort.postMessage(String((err && err.message) || err));
  }
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;
