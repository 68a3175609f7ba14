import { type ChildProcess, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './harness.js';

const BINARIES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];

export interface PgBouncer {
  /** DATABASE_URL through the bouncer (same database, user and password). */
  url: string;
  output(): string;
  close(): Promise<void>;
}

/** The installed pgbouncer binary, or undefined (CI installs it: .ci/run). */
export function pgBouncerBinary(): string | undefined {
  return BINARIES.find((path) => existsSync(path));
}

/**
 * A real PgBouncer in transaction mode in front of `databaseUrl`'s server, on a free loopback
 * port, with fewer server connections than Herald's pool so that clients really share them.
 * PgBouncer refuses to run as root: under root it runs as `nobody`.
 */
export async function startPgBouncer(databaseUrl: string, serverConnections = 3): Promise<PgBouncer> {
  const binary = pgBouncerBinary();
  if (!binary) throw new Error('pgbouncer is not installed');
  const server = new URL(databaseUrl);
  const database = server.pathname.slice(1);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'herald-pgbouncer-'));
  const connection = [
    `host=${server.hostname}`,
    `port=${server.port || 5432}`,
    `dbname=${database}`,
    `user=${decodeURIComponent(server.username)}`,
    server.password ? `password=${decodeURIComponent(server.password)}` : '',
  ].join(' ');
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `${database} = ${connection}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // Clients are not checked (loopback, a test): the server login is the entry's user.
      'auth_type = any',
      'pool_mode = transaction',
      `default_pool_size = ${serverConnections}`,
      'max_client_conn = 500',
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  // The file holds the server password: readable by the bouncer's user only.
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
  if (asNobody) {
    chownSync(dir, asNobody.uid, asNobody.gid);
    chownSync(ini, asNobody.uid, asNobody.gid);
  }
  const child: ChildProcess = spawn(binary, [ini], { stdio: ['ignore', 'pipe', 'pipe'], ...(asNobody ?? {}) });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await waitForPort(
    port,
    () => child.exitCode !== null,
    () => output,
  );
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    output: () => output,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, died: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (died()) throw new Error(`pgbouncer exited: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
