import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { ClockCache } from '../lru.js';

/**
 * A reader thread (off-loop-reads.ts starts it): a read-only connection of its own to the
 * SQLite file, which runs the statements it is sent and answers their rows. In WAL mode it
 * reads the last committed state beside the process's writing connection, never blocking it.
 */
export interface ReadRequest {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}

/** The rows, or the error's fields (an Error's own fields do not cross threads). */
export type ReadReply = { id: number; rows: unknown[] } | { id: number; error: { message: string; code?: string } };

const port = parentPort;
if (port) {
  // Read-only: a statement that would write fails here (SQLITE_READONLY) rather than write
  // outside the commit queue.
  const file = new SqliteDatabase(workerData.path as string, { readonly: true, fileMustExist: true });
  file.pragma('busy_timeout = 5000');
  file.pragma('temp_store = memory');
  // Pages read in place from the mapped file rather than copied in by a system call each: a
  // segment counted over a million events took 65 ms instead of 165 (docs/performance.md). A
  // disk error on a mapped page ends the process (SIGBUS) instead of failing the statement:
  // accepted for reads of a disk that is failing anyway. The writing connection reads through
  // its cache, so no write depends on the mapping.
  file.pragma('mmap_size = 1073741824');
  const statements = new ClockCache<string, SqliteDatabase.Statement>(100);
  port.on('message', ({ id, sql, parameters }: ReadRequest) => {
    try {
      const statement = statements.get(sql, () => file.prepare(sql));
      port.postMessage({ id, rows: statement.all(parameters as unknown[]) } satisfies ReadReply);
    } catch (err) {
      const { message, code } = err as { message: string; code?: string };
      port.postMessage({ id, error: { message, code } } satisfies ReadReply);
    }
  });
}
