import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/herald', import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<number | null>;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** Starts `bin/herald serve --role ROLE` (the compiled build) as a separate process. */
export function startHeraldProcess(role: 'api' | 'worker' | 'all', env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, [BIN, 'serve', '--role', role], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill(signal) {
      child.kill(signal);
      await exited;
    },
  };
}
