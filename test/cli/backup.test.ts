import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connect.js';
import { revealKey } from '../../src/modules/keys/keys.service.js';
import { openPixelUrl, readOpenToken } from '../../src/modules/tracking/tracking-token.js';
import { apiClient } from '../helpers/app.js';
import { runHerald } from '../helpers/cli.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { processEnv } from '../helpers/harness.js';
import { startTestHerald, type TestHerald } from '../helpers/herald.js';
import { launch, PRODUCTION_COMMAND } from '../ops/production-command.js';

/** `herald backup --to FILE`: SQLite's online backup, taken while the server runs and writes. */
let t: TestHerald;
let env: Record<string, string>;
let dir: string;
before(async () => {
  t = await startTestHerald();
  env = processEnv(t);
  dir = mkdtempSync(join(tmpdir(), 'herald-backup-'));
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

test('copies the running database into a consistent file that holds what was written', {
  skip: Boolean(process.env.DATABASE_URL),
}, async () => {
  const { key } = await makeTenant(t.db, t.config);
  const api = apiClient(t.app, key);
  const email = randomEmail();
  assert.equal((await api.post('/api/leads', { email, name: 'Grace Hopper' })).status, 200);
  // Writes keep coming while the copy is taken.
  let writing = true;
  const writes = (async () => {
    while (writing) await api.post('/api/leads', { email: randomEmail(), name: 'Busy Writer' });
  })();
  const file = join(dir, 'herald-backup.db');
  const result = await runHerald(['backup', '--to', file], env);
  writing = false;
  await writes;
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.json, { file, bytes: result.json.bytes });
  assert.ok(result.json.bytes > 0);
  assert.equal(statSync(file).mode & 0o777, 0o600, 'the copy is readable by its owner only');
  const copy = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
    const row = copy.prepare('select count(*) as n from contact_emails where email = ?').get(email) as { n: number };
    assert.equal(row.n, 1);
  } finally {
    copy.close();
  }
});

test('refuses to overwrite an existing file, and a missing --to', { skip: Boolean(process.env.DATABASE_URL) }, async () => {
  const file = join(dir, 'exists.db');
  writeFileSync(file, 'keep me');
  const result = await runHerald(['backup', '--to', file], env);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /already exists/);
  const missing = await runHerald(['backup'], env);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^herald: backup needs --to FILE/);
});

test('with DATABASE_URL it points to pg_dump instead', { skip: !process.env.DATABASE_URL }, async () => {
  const file = join(dir, 'pg.db');
  const result = await runHerald(['backup', '--to', file], env);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /pg_dump/);
  assert.equal(existsSync(file), false);
});

test('the README restore procedure: the backup and the secret in a fresh DATA_DIR give back the data, keys and links', {
  skip: Boolean(process.env.DATABASE_URL),
}, async () => {
  const { accountId, keyId, key } = await makeTenant(t.db, t.config);
  const email = randomEmail();
  assert.equal((await apiClient(t.app, key).post('/api/leads', { email, name: 'Ada Lovelace' })).status, 200);
  const pixelToken = openPixelUrl(t.config, 'snd_sent_before_the_backup').split('/').pop()!;
  const file = join(dir, 'restore-me.db');
  assert.equal((await runHerald(['backup', '--to', file], env)).code, 0);

  // 2-3: a DATA_DIR with the copy as herald.db and the secret as secret, both 0600.
  const restored = mkdtempSync(join(tmpdir(), 'herald-restored-'));
  copyFileSync(file, join(restored, 'herald.db'));
  writeFileSync(join(restored, 'secret'), `${t.config.secret}\n`, { mode: 0o600 });
  chmodSync(join(restored, 'herald.db'), 0o600);
  const restoredEnv = { DATA_DIR: restored, DATABASE_URL: '', LOG_LEVEL: 'silent' };

  // 4: start it (the production command) and use what was there before the backup.
  const server = launch(PRODUCTION_COMMAND[0]!, PRODUCTION_COMMAND.slice(1), { ...restoredEnv, PORT: '0', LOG_LEVEL: 'info' });
  try {
    const { port } = await server.started();
    const res = await fetch(`http://127.0.0.1:${port}/api/leads`, {
      method: 'POST',
      headers: { 'x-service-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ email, name: 'Ada King' }),
    });
    assert.equal(res.status, 200, 'the key made before the backup authenticates');
    const shown = await runHerald(['contact', 'show', '--account', accountId, '--email', email], restoredEnv);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.name, 'Ada King', 'the restored contact, updated through the restored server');
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  const withSecret = loadConfig(restoredEnv);
  const db = await openDatabase(withSecret);
  try {
    assert.equal(await revealKey(db, withSecret, accountId, keyId), key, 'the key value can be shown again');
    assert.deepEqual(readOpenToken(withSecret, pixelToken), { sendId: 'snd_sent_before_the_backup' }, 'links sent before verify');
  } finally {
    await db.close();
    rmSync(restored, { recursive: true, force: true });
  }
});

test('restored without its secret: hashes still work, what was sealed or signed with the old secret does not', {
  skip: Boolean(process.env.DATABASE_URL),
}, async () => {
  const { accountId, keyId, key } = await makeTenant(t.db, t.config);
  const email = randomEmail();
  assert.equal((await apiClient(t.app, key).post('/api/leads', { email, name: 'Alan Turing' })).status, 200);
  const pixelToken = openPixelUrl(t.config, 'snd_sent_before_the_backup').split('/').pop()!;
  const file = join(dir, 'no-secret.db');
  assert.equal((await runHerald(['backup', '--to', file], env)).code, 0);
  const restored = mkdtempSync(join(tmpdir(), 'herald-no-secret-'));
  copyFileSync(file, join(restored, 'herald.db'));
  const restoredEnv = { DATA_DIR: restored, DATABASE_URL: '', LOG_LEVEL: 'silent' };
  const shown = await runHerald(['contact', 'show', '--account', accountId, '--email', email], restoredEnv);
  assert.equal(shown.json.name, 'Alan Turing', 'the data itself is there');
  const config = loadConfig(restoredEnv); // a new secret is generated into DATA_DIR
  assert.notEqual(config.secret, t.config.secret);
  const db = await openDatabase(config);
  try {
    await assert.rejects(revealKey(db, config, accountId, keyId), 'the stored key value cannot be decrypted');
    assert.equal(readOpenToken(config, pixelToken), undefined, 'links sent before no longer verify');
  } finally {
    await db.close();
    rmSync(restored, { recursive: true, force: true });
  }
});
