import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connect.js';
import { makeAccount } from '../helpers/factories.js';

/**
 * The embedded database holds contacts, password hashes and sealed secrets: its files are
 * created readable by their owner only, like DATA_DIR/secret. Always a fresh SQLite file.
 */
const modeOf = (path: string) => statSync(path).mode & 0o777;

test('a new DATA_DIR is 0700; herald.db, its -wal and -shm and the secret are 0600', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'herald-modes-'));
  const dataDir = join(parent, 'data');
  try {
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: '' });
    const db = await openDatabase(config);
    try {
      await makeAccount(db); // a write: the WAL and its index exist while the database is open
      assert.equal(modeOf(dataDir), 0o700);
      assert.equal(modeOf(join(dataDir, 'secret')), 0o600);
      for (const name of ['herald.db', 'herald.db-wal', 'herald.db-shm']) {
        assert.ok(existsSync(join(dataDir, name)), name);
        assert.equal(modeOf(join(dataDir, name)), 0o600, name);
      }
    } finally {
      await db.close();
    }
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('an existing database keeps the mode its operator gave it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-modes-'));
  try {
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: '' });
    await (await openDatabase(config)).close();
    chmodSync(join(dataDir, 'herald.db'), 0o640);
    await (await openDatabase(config)).close();
    assert.equal(modeOf(join(dataDir, 'herald.db')), 0o640);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
