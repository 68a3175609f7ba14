import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { hintFirstAdministrator } from '../../src/modules/admin/first-start.js';
import { captureLogger, openTestDatabase } from '../helpers/harness.js';
import { makeUser } from './helpers.js';

/**
 * Start-up on a database without any user tells how to create the first administrator. An
 * empty database is needed, so this test always uses a fresh SQLite file (a shared PostgreSQL
 * has users from other tests).
 */
test('no users: one warning with the account create and user create --role admin commands; silent once a user exists', async () => {
  const { db, config, close } = await openTestDatabase({ env: { DATABASE_URL: '' } });
  const { logger, lines } = captureLogger({ level: 'info' });
  try {
    await hintFirstAdministrator(db, logger, 'http://127.0.0.1:3000/admin');
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]!) as { level: number; msg: string; steps: string[]; panel: string };
    assert.equal(line.level, 40, 'a warning');
    assert.match(line.steps[0]!, /^bin\/herald account create --name /);
    assert.match(line.steps[1]!, /^bin\/herald user create --account acc_\S* --email \S+ --password .* --role admin$/);
    assert.equal(line.panel, 'http://127.0.0.1:3000/admin');

    await makeUser({ db, config, app: undefined as never });
    await hintFirstAdministrator(db, logger, 'http://127.0.0.1:3000/admin');
    assert.equal(lines.length, 1, 'nothing more once someone can sign in');
  } finally {
    await close();
  }
});

test('npm start on an empty database prints the hint once it listens', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-first-start-'));
  const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: '0', HERALD_SECRET: 'test-secret-not-for-production', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const deadline = Date.now() + 60_000; // tsx compiles the whole app first: slow on a busy machine
    while (!output.includes('no users yet') && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 50));
    assert.match(output, /herald started[\s\S]*no users yet/, output);
    assert.match(output, /bin\/herald user create --account acc_\S* --email \S+ --password .* --role admin/);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});
