import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { describeStartup } from '../../src/ops/startup-line.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { launch } from './production-command.js';

/** Start-up tells the truth: one readable line, a refused SMTP_URL, and `/` leads to the panel. */

const SHAPE = 'smtp://user:pass@host:port or smtps://user:pass@host:port';
let dataDir: string;
before(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'herald-startup-'));
});
after(() => rmSync(dataDir, { recursive: true, force: true }));

const configOf = (env: Record<string, string>) => loadConfig({ DATA_DIR: dataDir, HERALD_SECRET: TEST_SECRET, ...env });
const facts = { version: '1.2.3', role: 'all' as const, listening: { host: '127.0.0.1', port: 3000 }, metricsPort: undefined };

test('the line names the address, the database, where mail goes, the roles and the public URL', () => {
  assert.equal(
    describeStartup(
      configOf({ SMTP_URL: 'smtp://mailer:Pa55-w0rd@smtp.example.com:2525', PUBLIC_URL: 'https://herald.example.com' }),
      facts,
    ),
    `Herald 1.2.3 started · listening on http://127.0.0.1:3000 · database SQLite ${dataDir}/herald.db · mail SMTP smtp.example.com:2525 · roles api+worker · admin panel https://herald.example.com/admin · public URL https://herald.example.com`,
  );
  const pg = configOf({ DATABASE_URL: 'postgres://herald:pg-Secret-9@db.internal:6432/herald', SMTP_URL: 'smtps://u:p@mail.example.com' });
  assert.equal(
    describeStartup(pg, { ...facts, role: 'worker', listening: undefined, metricsPort: 9464 }),
    'Herald 1.2.3 started · no HTTP server (worker) · metrics on port 9464 · database PostgreSQL db.internal:6432/herald · mail SMTPS mail.example.com:465 · role worker · public URL http://127.0.0.1:3000',
  );
  assert.equal(
    describeStartup(configOf({}), { ...facts, role: 'api' }),
    `Herald 1.2.3 started · listening on http://127.0.0.1:3000 · database SQLite ${dataDir}/herald.db · role api · admin panel http://127.0.0.1:3000/admin · public URL http://127.0.0.1:3000`,
  );
  assert.match(
    describeStartup(configOf({}), facts),
    / · mail outbox \(no SMTP_URL: emails are kept in the built-in outbox, nothing is sent\) · /,
  );
  assert.match(describeStartup(configOf({ SMTP_URL: 'smtp://h.example' }), facts), / · mail SMTP h\.example:587 · /);
});

test('the PostgreSQL settings: the LISTEN URL defaults to DATABASE_URL, and the pool size is bounded', () => {
  const direct = 'postgres://herald:Pa55-w0rd@db.example:5432/herald';
  const bouncer = 'postgres://herald:Pa55-w0rd@bouncer.example:6432/herald';
  assert.equal(configOf({ DATABASE_URL: direct }).databaseListenUrl, direct);
  assert.equal(configOf({ DATABASE_URL: bouncer, DATABASE_LISTEN_URL: direct }).databaseListenUrl, direct);
  assert.equal(configOf({}).databaseListenUrl, undefined);
  assert.equal(configOf({}).databasePoolSize, 10);
  assert.equal(configOf({ DATABASE_POOL_SIZE: '25' }).databasePoolSize, 25);
  const refused: Array<[Record<string, string>, string]> = [
    [{ DATABASE_URL: 'mysql://herald:Pa55-w0rd@db.example/herald' }, 'DATABASE_URL must start with postgres:// or postgresql://'],
    [{ DATABASE_URL: direct, DATABASE_LISTEN_URL: 'db.example:5432' }, 'DATABASE_LISTEN_URL must start with postgres:// or postgresql://'],
    [{ DATABASE_LISTEN_URL: direct }, 'DATABASE_LISTEN_URL needs DATABASE_URL (SQLite has no LISTEN)'],
    [{ DATABASE_POOL_SIZE: '0' }, "DATABASE_POOL_SIZE must be a whole number from 1 to 1000, got '0'"],
  ];
  for (const [env, message] of refused)
    assert.throws(
      () => configOf(env),
      (err: Error) => err instanceof ConfigError && err.message === message && !err.message.includes('Pa55-w0rd'),
      message,
    );
});

test('an SMTP_URL that is not smtp:// or smtps:// with a host is refused, without repeating the URL', () => {
  const refused: Array<[string, string]> = [
    ['http://mailer:Pa55-w0rd@smtp.example.com', `SMTP_URL must start with smtp:// or smtps:// (${SHAPE}), got 'http://'`],
    ['smtp.example.com:587', `SMTP_URL must start with smtp:// or smtps:// (${SHAPE}), got 'smtp.example.com://'`],
    ['mailer:Pa55-w0rd', `SMTP_URL must start with smtp:// or smtps:// (${SHAPE}), got 'mailer://'`],
    ['smtp://', `SMTP_URL must name the SMTP server's host (${SHAPE})`],
    ['not a url', `SMTP_URL must be a URL like ${SHAPE}`],
  ];
  for (const [url, message] of refused) {
    assert.throws(
      () => configOf({ SMTP_URL: url }),
      (err: Error) => err instanceof ConfigError && err.message === message && !err.message.includes('Pa55-w0rd'),
      url,
    );
  }
  for (const url of ['smtp://127.0.0.1:2525', 'smtps://u:p@mail.example.com:465', 'SMTP://MAIL.EXAMPLE.COM'])
    assert.equal(configOf({ SMTP_URL: url }).smtpUrl, url);
});

test('a refused SMTP_URL stops the server at start: one line on stderr, exit 1, nothing served', async () => {
  const run = launch('node', ['bin/herald', 'serve'], {
    DATA_DIR: dataDir,
    PORT: '0',
    SMTP_URL: 'https://mailer:Pa55-w0rd@smtp.example.com',
  });
  const exit = await run.exited;
  assert.deepEqual(exit, { code: 1, signal: null });
  assert.equal(run.output(), `herald: SMTP_URL must start with smtp:// or smtps:// (${SHAPE}), got 'https://'\n`);
});

test('the real start-up line: where mail goes, never the SMTP password', async () => {
  const run = launch('node', ['bin/herald', 'serve'], {
    DATA_DIR: dataDir,
    PORT: '0',
    HERALD_SECRET: TEST_SECRET,
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    SMTP_URL: 'smtp://mailer:Pa55-w0rd@127.0.0.1:2525',
    PUBLIC_URL: 'https://herald.test',
    LOG_LEVEL: 'info',
  });
  try {
    const line = await run.started();
    const database = process.env.DATABASE_URL ? /database PostgreSQL \S+:\d+\/\S+/ : new RegExp(`database SQLite ${dataDir}/herald\\.db`);
    assert.match(line.msg, new RegExp(`^Herald \\d+\\.\\d+\\.\\d+ started · listening on http://127\\.0\\.0\\.1:${line.port} · `));
    assert.match(line.msg, database);
    assert.match(
      line.msg,
      / · mail SMTP 127\.0\.0\.1:2525 · roles api\+worker · admin panel https:\/\/herald\.test\/admin · public URL https:\/\/herald\.test$/,
    );
    assert.equal(line.mail, 'SMTP 127.0.0.1:2525');
    run.child.kill('SIGTERM');
    await run.exited;
    assert.ok(!run.output().includes('Pa55-w0rd'), 'the SMTP password is never written');
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
});

test('GET / (and HEAD /) redirect to the admin panel', async () => {
  const t: TestApp = await startTestApp();
  try {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await t.app.inject({ method, url: '/' });
      assert.equal(res.statusCode, 302, method);
      assert.equal(res.headers.location, '/admin');
    }
  } finally {
    await t.close();
  }
});
