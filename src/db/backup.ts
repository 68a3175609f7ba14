import SqliteDatabase from 'better-sqlite3';

/**
 * A consistent copy of a SQLite database file through SQLite's online backup API: safe while
 * another process writes (a plain file copy of a WAL database is not).
 */
export async function backupSqliteFile(source: string, target: string): Promise<void> {
  const db = new SqliteDatabase(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(target);
  } finally {
    db.close();
  }
}
