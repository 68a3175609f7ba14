import { closeSync, openSync, rmSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';

/**
 * A consistent copy of a SQLite database file through SQLite's online backup API: safe while
 * another process writes (a plain file copy of a WAL database is not). The copy is created
 * readable by its owner only (it holds what the database holds), and never over an existing
 * file: `exclusive` creation refuses one atomically (EEXIST).
 */
export async function backupSqliteFile(source: string, target: string): Promise<void> {
  const db = new SqliteDatabase(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // An empty file is an empty database to SQLite: the backup fills it and keeps its mode.
    closeSync(openSync(target, 'wx', 0o600));
    try {
      await db.backup(target);
    } catch (err) {
      rmSync(target, { force: true });
      throw err;
    }
  } finally {
    db.close();
  }
}
