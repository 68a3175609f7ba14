import { type FileHandle, open } from 'node:fs/promises';

/**
 * The fsync that makes SQLite group commits durable, run on libuv's thread pool instead of
 * the event loop (issue 9).
 *
 * With `synchronous = FULL`, better-sqlite3 runs each COMMIT's fsync of the WAL on the event
 * loop: the whole process stops for it. Under a send burst that was 40% of the dispatcher's
 * wall time (5 ms per commit on a busy disk, docs/performance.md), during which no SMTP reply
 * was read and no API request answered. A group commit (db/transaction.ts) now commits with
 * `synchronous = NORMAL` (the frames are written to the WAL, not yet synced), and answers its
 * callers only after this sync of the WAL file: the same guarantee (nothing is acknowledged
 * before it is on disk), without blocking. Writes outside a group commit keep FULL.
 *
 * Why syncing the file from another descriptor is enough: fdatasync flushes the file's data
 * whichever descriptor wrote it, and the WAL is written in order, so a sync started after a
 * commit's frames were written covers them and every earlier commit. SQLite syncs the WAL itself
 * before each checkpoint copies frames into the database (NORMAL does that too), so a checkpoint
 * or a WAL restart never drops unsynced frames. The file is the one SQLite writes as long as this
 * process keeps its connection open (SQLite deletes the WAL only when the last connection closes).
 *
 * Syncs do not overlap: callers that ask while one runs share the next one (it may have begun
 * before their frames were written).
 */
export class WalSync {
  private handle: FileHandle | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly walPath: string) {}

  /** Opens the WAL file; false when it cannot be (commits then keep their own fsync). */
  async open(): Promise<boolean> {
    try {
      this.handle = await open(this.walPath, 'r');
      return true;
    } catch {
      return false;
    }
  }

  /** True once the WAL file is open: group commits may leave their fsync to sync(). */
  get ready(): boolean {
    return this.handle !== undefined;
  }

  /** Resolves once every frame written to the WAL before this call is on disk. */
  sync(): Promise<void> {
    if (!this.running) return this.start();
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.start();
    });
    return this.queued;
  }

  /**
   * Resolves once the syncs asked for so far are over (at once when none is): every frame of a
   * commit that asked for one is then on disk, or its caller has heard it is not. Starts none.
   */
  settled(): Promise<void> {
    const last = this.queued ?? this.running;
    return last ? last.then(ignore, ignore) : Promise.resolve();
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await this.running;
    await handle?.close();
  }

  private start(): Promise<void> {
    const handle = this.handle;
    const run = handle ? handle.datasync() : Promise.reject(new Error('database closed'));
    const settled: Promise<void> = run.then(
      () => this.finished(settled),
      () => this.finished(settled),
    );
    this.running = settled;
    return run;
  }

  private finished(settled: Promise<void>): void {
    if (this.running === settled) this.running = undefined;
  }
}

function ignore(): void {}
