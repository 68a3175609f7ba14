import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { apiClient } from '../helpers/app.js';
import { runHerald } from '../helpers/cli.js';
import { makeTenant, randomEmail } from '../helpers/factories.js';
import { processEnv } from '../helpers/harness.js';
import { startTestHerald, type TestHerald } from '../helpers/herald.js';

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
