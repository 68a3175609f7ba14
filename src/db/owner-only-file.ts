import { closeSync, openSync } from 'node:fs';

/**
 * A SQLite file of Herald's holds contacts' data (herald.db: contacts, password hashes and
 * sealed secrets; smtp-accepted.db: addresses): a new file is created readable by its owner
 * only (0600), like DATA_DIR/secret. SQLite gives the -wal and -shm files it creates beside it
 * the same mode. An existing file keeps the mode its operator gave it.
 */
export function createOwnerOnly(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}
