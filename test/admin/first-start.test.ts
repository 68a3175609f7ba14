import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EXAMPLE_ACCOUNT_ID, firstAdministratorGuide, hintFirstAdministrator } from '../../src/modules/admin/first-start.js';
import { runHerald } from '../helpers/cli.js';
import { captureLogger, openTestDatabase, TEST_SECRET } from '../helpers/harness.js';
import { makeUser } from './helpers.js';

/**
 * Start-up on a database without any user tells how to create the first administrator. An
 * empty database is needed, so this test always uses a fresh SQLite file (a shared PostgreSQL
 * has users from other tests).
 */
test('no users: one warning, and the guide as plain lines with the account create and user create --role admin commands; silent once a user exists', async () => {
  const { db, config, close } = await openTestDatabase({ env: { DATABASE_URL: '' } });
  const { logger, lines } = captureLogger({ level: 'info' });
  const printed: string[] = [];
  try {
    await hintFirstAdministrator(db, logger, 'http://127.0.0.1:3000/admin', (text) => printed.push(text));
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]!) as { level: number; msg: string; panel: string };
    assert.equal(line.level, 40, 'a warning');
    assert.match(line.msg, /^no users yet: create the first administrator with bin\/herald/);
    assert.equal(line.panel, 'http://127.0.0.1:3000/admin');
    assert.equal(printed.length, 1);
    const text = printed[0]!;
    assert.equal(text, `\n${firstAdministratorGuide('http://127.0.0.1:3000/admin')}\n`);
    assert.match(text, /^ {2}\$ bin\/herald account create --name "Acme Inc"$/m);
    assert.match(
      text,
      new RegExp(`^  \\$ bin/herald user create --account ${EXAMPLE_ACCOUNT_ID} --email \\S+ --password '.{8,}' --role admin$`, 'm'),
    );
    assert.match(text, /^Then sign in at http:\/\/127\.0\.0\.1:3000\/admin$/m);

    await makeUser({ db, config, app: undefined as never });
    await hintFirstAdministrator(db, logger, 'http://127.0.0.1:3000/admin', (text) => printed.push(text));
    assert.equal(lines.length, 1, 'nothing more once someone can sign in');
    assert.equal(printed.length, 1);
  } finally {
    await close();
  }
});

test('the printed commands work as printed, once the example id is replaced by the one account create printed', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-first-admin-'));
  const env = { DATA_DIR: dataDir, HERALD_SECRET: TEST_SECRET, DATABASE_URL: '', LOG_LEVEL: 'silent' };
  try {
    const commands = [...firstAdministratorGuide('http://x/admin').matchAll(/^ {2}\$ bin\/herald (.*)$/gm)].map((m) => shellWords(m[1]!));
    assert.equal(commands.length, 2);
    const account = await runHerald(commands[0]!, env);
    assert.equal(account.code, 0, account.stderr);
    const user = await runHerald(
      commands[1]!.map((word) => (word === EXAMPLE_ACCOUNT_ID ? account.json.id : word)),
      env,
    );
    assert.equal(user.code, 0, user.stderr);
    assert.match(user.json.id, /^usr_/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Splits a command line the way sh does for the quoting the guide uses ('...' and "..."). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

test('npm start on an empty database prints the hint once it listens', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-first-start-'));
  const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: dataDir,
      PORT: '0',
      PUBLIC_URL: 'https://herald.test',
      HERALD_SECRET: 'test-secret-not-for-production',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const deadline = Date.now() + 60_000; // tsx compiles the whole app first: slow on a busy machine
    // The log (stdout) and the guide (stderr) come through two pipes: no order between them.
    const done = () => output.includes('Then sign in at') && output.includes('no users yet');
    while (!done() && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    assert.match(output, /Herald \S+ started · [^\n]*\n[\s\S]*"msg":"no users yet/, output);
    assert.ok(output.includes(firstAdministratorGuide('https://herald.test/admin')), output);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});
