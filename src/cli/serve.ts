import { parseArgs } from 'node:util';
import { ROLES, type Role } from '../herald.js';
import { redactKeys } from '../redact-keys.js';
import { runHerald } from '../server.js';

/**
 * `herald serve [--role api|worker|all]`: runs Herald in the foreground (`npm start` is
 * `--role all`). Scale out with API processes and worker processes on one PostgreSQL.
 */
export async function serve(args: string[]): Promise<number> {
  let role: string;
  try {
    const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } }, strict: true, allowPositionals: false });
    role = values.role as string;
  } catch (err) {
    process.stderr.write(`herald: ${redactKeys((err as Error).message)}\n`);
    return 2;
  }
  if (!(ROLES as readonly string[]).includes(role)) {
    process.stderr.write(`herald: --role must be api, worker or all, got '${redactKeys(role)}'\n`);
    return 2;
  }
  await runHerald(role as Role);
  // Keeps running until SIGTERM/SIGINT, which exit the process.
  return new Promise<number>(() => undefined);
}
