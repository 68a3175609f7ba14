import type { Logger } from 'pino';
import type { Db } from '../../db/connect.js';
import { anyUserExists } from '../users/users.service.js';

/** The account id in the example: the shape `account create` prints, so the example reads like a real session. */
export const EXAMPLE_ACCOUNT_ID = 'acc_01JDQ4V9K3M2ZB7T8XN5W6PRSA';

/**
 * What an operator reads on a database with no users: nobody can sign in to the panel before
 * an administrator exists, and the panel cannot create the first one (it would need someone
 * signed in). Plain lines with commands that work as printed once the id is replaced.
 */
export function firstAdministratorGuide(panelUrl: string): string {
  return [
    'No users yet: nobody can sign in to the admin panel until a first administrator exists.',
    'Create one with bin/herald, run from the Herald directory with the same DATA_DIR or DATABASE_URL',
    '(in a container: docker compose exec herald bin/herald ...). For example:',
    '',
    '  $ bin/herald account create --name "Acme Inc"',
    `  {"id":"${EXAMPLE_ACCOUNT_ID}"}`,
    `  $ bin/herald user create --account ${EXAMPLE_ACCOUNT_ID} --email admin@acme.example --password 'a long passphrase' --role admin`,
    '  {"id":"usr_01JDQ4WB2CFX9Q0H5S1V7M3KTE"}',
    '',
    'using the id that account create printed for you, and your own email and password (8 characters at least).',
    `Then sign in at ${panelUrl}`,
    '',
  ].join('\n');
}

/**
 * On a database with no users at all, tells the operator how to create the first
 * administrator: a warning in the log (JSON, for log collectors) and the guide as plain text on
 * stderr (a JSON log line cannot show lines to copy). Both follow LOG_LEVEL.
 */
export async function hintFirstAdministrator(
  db: Db,
  logger: Logger,
  panelUrl: string,
  write: (text: string) => void = (text) => process.stderr.write(text),
): Promise<void> {
  if (await anyUserExists(db)) return;
  logger.warn({ panel: panelUrl }, 'no users yet: create the first administrator with bin/herald (how: the lines printed on stderr)');
  if (logger.isLevelEnabled('warn')) write(`\n${firstAdministratorGuide(panelUrl)}\n`);
}
