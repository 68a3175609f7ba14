import { parseArgs } from 'node:util';
import { type Config, loadConfig } from '../config.js';
import { openDatabase } from '../db/connect.js';
import { AppError } from '../errors.js';
import { redactKeys } from '../redact-keys.js';
import { backup } from './backup.js';
import { type CommandGroup, UsageError } from './command.js';
import { account } from './commands/account.js';
import { campaign } from './commands/campaign.js';
import { contact } from './commands/contact.js';
import { field, kpi } from './commands/definitions.js';
import { key } from './commands/key.js';
import { outbox } from './commands/outbox.js';
import { user } from './commands/user.js';
import { webhook } from './commands/webhook.js';
import { serve } from './serve.js';

/** `bin/herald GROUP ACTION [--options]`: one JSON object on stdout, or one line on stderr. */
const GROUPS: Record<string, CommandGroup> = { account, key, field, kpi, contact, user, webhook, outbox, campaign };

function usage(): string {
  const lines = Object.entries(GROUPS).map(([group, actions]) => `  herald ${group} ${Object.keys(actions).join('|')}`);
  return ['usage:', '  herald serve [--role api|worker|all]', '  herald backup --to FILE', ...lines].join('\n');
}

export async function runCli(argv: string[]): Promise<number> {
  if (argv[0] === 'serve') return serve(argv.slice(1));
  if (argv[0] === 'backup') return backup(argv.slice(1));
  const [groupName, actionName, ...rest] = argv;
  const group = groupName ? GROUPS[groupName] : undefined;
  const command = group && actionName ? group[actionName] : undefined;
  if (!command) {
    complain(`unknown command '${[groupName, actionName].filter(Boolean).join(' ')}'\n${usage()}`);
    return 2;
  }
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }));
  } catch (err) {
    complain((err as Error).message);
    return 2;
  }

  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    complain((err as Error).message);
    return 1;
  }
  const db = await openDatabase(config, { poolSize: 2 });
  try {
    const result = await command.run({ config, db }, values);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (err) {
    complain(describe(err));
    return err instanceof UsageError ? 2 : 1;
  } finally {
    await db.close();
  }
}

/**
 * One line on stderr. Messages can echo what was typed (an option, a URL), and a key pasted
 * where it does not belong must not land in a terminal log: key values are cut by shape.
 */
function complain(message: string): void {
  process.stderr.write(`herald: ${redactKeys(message)}\n`);
}

/** One line: the message, and for a Validation Error what is wrong where. */
function describe(err: unknown): string {
  if (err instanceof AppError) {
    const details = err.details?.map((d) => `${d.path.replace(/^\//, '')}: ${d.message}`).join('; ');
    return details ? `${err.message}: ${details}` : err.message;
  }
  if (err instanceof Error) return err.message.split('\n')[0]!;
  return String(err);
}

const exitCode = await runCli(process.argv.slice(2));
process.exitCode = exitCode;
