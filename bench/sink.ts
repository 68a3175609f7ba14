import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface SinkProcess {
  url: string;
  /** Messages the sink has accepted so far. */
  count(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts bench/sink-process.ts (an SmtpSink) as a child process and waits for its address. */
export async function startSinkProcess(): Promise<SinkProcess> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./sink-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  });
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`smtp sink process exited (${code})`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.off('exit', onExit);
        resolve(message as Record<string, unknown>);
      });
    });
  const { url } = await next();
  return {
    url: String(url),
    async count() {
      const reply = next();
      child.send('count');
      return Number((await reply).count);
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('stop');
      await exited;
    },
  };
}
