import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/herald', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed, when it is the one JSON object the CLI promises. */
  json: any;
}

/** Runs the real `bin/herald` (the compiled build) with the given configuration. */
export function runHerald(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }, (err, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr, json });
    });
  });
}
