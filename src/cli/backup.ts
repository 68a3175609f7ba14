import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { backupSqliteFile } from '../db/backup.js';

/**
 * `herald backup --to FILE`: a consistent copy of the embedded SQLite database through
 * SQLite's online backup API, safe while the server runs and writes (a plain file copy of a
 * WAL database is not). PostgreSQL is backed up with its own tools (pg_dump).
 * Prints `{"file": PATH, "bytes": N}`.
 */
export async function backup(args: string[]): Promise<number> {
  let to: string | undefined;
  try {
    ({
      values: { to },
    } = parseArgs({ args, options: { to: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (err) {
    process.stderr.write(`herald: ${(err as Error).message}\n`);
    return 2;
  }
  if (!to) {
    process.stderr.write('herald: backup needs --to FILE\n');
    return 2;
  }
  try {
    const config = loadConfig();
    if (config.databaseUrl) throw new Error('backup copies the embedded SQLite database; with DATABASE_URL use pg_dump');
    const target = resolve(to);
    // Never overwrite: a slip such as `--to data/herald.db` must not destroy anything.
    if (existsSync(target)) throw new Error(`${target} already exists`);
    const source = join(config.dataDir, 'herald.db');
    if (!existsSync(source)) throw new Error(`no database at ${source}`);
    try {
      await backupSqliteFile(source, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`${target} already exists`);
      throw err;
    }
    process.stdout.write(`${JSON.stringify({ file: target, bytes: statSync(target).size })}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`herald: ${(err as Error).message}\n`);
    return 1;
  }
}
