import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The project root: where `npm start` and the production command run (the image's WORKDIR). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The documented way to run Herald in production (README, Running in production), and the
 * container's ENTRYPOINT + CMD: node itself, with no npm or shell between it and the signals.
 */
export const PRODUCTION_COMMAND = ['node', 'bin/herald', 'serve', '--role', 'all'];

export interface LogLine {
  level: number;
  pid: number;
  msg: string;
  port?: number;
  [field: string]: unknown;
}

export interface Launched {
  child: ChildProcess;
  output(): string;
  /** The JSON log lines written so far. */
  lines(): LogLine[];
  /** The start-up line (`Herald X started · ...`), once written. */
  started(timeoutMs?: number): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs a command from the project root with only the given environment (plus PATH and HOME). */
export function launch(command: string, args: string[], env: Record<string, string>): Launched {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = () =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  return {
    child,
    output: () => output,
    lines,
    exited,
    async started(timeoutMs = 90_000) {
      // A busy machine (other suites on the same cores) makes a cold start slow.
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = lines().find((l) => / started · /.test(l.msg));
        if (line) return line;
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline)
          throw new Error(`no start-up line from ${command} ${args.join(' ')}:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** Whether a process with this pid still exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
