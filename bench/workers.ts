import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from '../src/config.js';
import { freePort } from '../test/helpers/harness.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Herald processes of the bench, started as production starts them (`herald serve --role ...`). */
export interface HeraldProcesses {
  pids: number[];
  /** HTTP port of each process: the API's, or the METRICS_PORT of a worker (probes only). */
  ports: number[];
  /** User + system CPU of all of them so far, ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/**
 * Starts `herald serve --role <role>` for each role given, on the bench's database and sink,
 * and waits until each answers /healthz (a worker on its METRICS_PORT). `extraArgs`: node flags
 * (a --cpu-prof profile).
 */
export async function startHeraldProcesses(
  config: Config,
  roles: ('api' | 'worker' | 'all')[],
  extraArgs: string[] = [],
): Promise<HeraldProcesses> {
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  for (const role of roles) {
    // Asked of the OS: a random one once landed on a port another service of the machine held.
    const port = await freePort();
    const child = spawn('node', [...extraArgs, 'bin/herald', 'serve', '--role', role], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: config.dataDir,
        DATABASE_URL: config.databaseUrl ?? '',
        HERALD_SECRET: config.secret,
        HOST: '127.0.0.1',
        // A worker has no API: its probes answer on METRICS_PORT (docs: Running in production).
        // It never listens on PORT, which need only differ from METRICS_PORT (config.ts).
        ...(role === 'worker' ? { PORT: String(port + 1), METRICS_PORT: String(port) } : { PORT: String(port) }),
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_SECOND: '1000000',
        RATE_LIMIT_BURST: '1000000',
        SMTP_URL: config.smtpUrl ?? '',
        SMTP_POOL_SIZE: String(config.smtpPoolSize),
        SMTP_THREAD: String(config.smtpThread),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // Its stderr holds the first-administrator hint: shown only when it stops on its own.
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.once('exit', (code) => code !== null && code !== 0 && console.error(stderr));
    children.push(child);
    ports.push(port);
  }
  const processes: HeraldProcesses = {
    pids: children.map((c) => c.pid!),
    ports,
    cpuMs: () => children.reduce((sum, c) => sum + processCpuMs(c.pid!), 0),
    async stop() {
      await Promise.all(
        children.map((c) => {
          if (c.exitCode !== null || c.signalCode !== null) return undefined;
          const exited = new Promise((resolve) => c.once('exit', resolve));
          c.kill('SIGTERM');
          return exited;
        }),
      );
    },
  };
  try {
    await Promise.all(ports.map((port) => waitForHealth(`http://127.0.0.1:${port}`)));
  } catch (err) {
    await processes.stop();
    throw err;
  }
  return processes;
}

export async function waitForHealth(baseUrl: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`herald serve at ${baseUrl} did not start within 90 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A process's user + system CPU time so far, ms (Linux /proc; 0 elsewhere). */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}
